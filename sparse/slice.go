package sparse

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
)

// window maps the dimensions of a COO view onto those of the array it views, in the manner of
// nd4j's sparse views: per array dimension either a fixed position (hidden from the view) or
// one view dimension with an offset and a step; new axes of size 1 belong to no array
// dimension.
type window struct {
	shape ndarray.Shape // of the view
	axes  []viewAxis    // one per view dimension
	fixed []int64       // per array dimension: the position when fixed, else -1
}

// viewAxis is one view dimension: array positions start, start+step, … (shape of the view
// many), or a new axis when dim is -1.
type viewAxis struct {
	dim         int
	start, step int64
}

// identityWindow returns the window of a whole array of shape.
func identityWindow(shape ndarray.Shape) *window {
	w := &window{shape: shape.Clone(), axes: make([]viewAxis, len(shape)), fixed: make([]int64, len(shape))}
	for d := range shape {
		w.axes[d] = viewAxis{dim: d, step: 1}
		w.fixed[d] = -1
	}
	return w
}

// toStore writes the array coordinates of view coordinates v into out.
func (w *window) toStore(v, out []int64) {
	for d, p := range w.fixed {
		if p >= 0 {
			out[d] = p
		}
	}
	for k, a := range w.axes {
		if a.dim >= 0 {
			out[a.dim] = a.start + v[k]*a.step
		}
	}
}

// fromStore writes the view coordinates of array coordinates c into out and reports whether
// the view shows them.
func (w *window) fromStore(c, out []int64) bool {
	for d, p := range w.fixed {
		if p >= 0 && c[d] != p {
			return false
		}
	}
	for k, a := range w.axes {
		if a.dim < 0 {
			if w.shape[k] == 0 {
				return false
			}
			out[k] = 0
			continue
		}
		off := c[a.dim] - a.start
		if off%a.step != 0 {
			return false
		}
		j := off / a.step
		if j < 0 || j >= w.shape[k] {
			return false
		}
		out[k] = j
	}
	return true
}

// Slice returns the part of c that indices select, with the rules and index constructors of
// ndarray.Dense.Slice. When every index is an arithmetic progression — At, All, Range,
// RangeStep, From, To, Step, Flip, Even, Odd, Mod, NewAxis, Ellipsis, and Incl or Excl of
// evenly spaced positions — the result is a view: it shares c's stored entries, Set through
// it stores into c, and it is read-only when c is. Otherwise (Incl, Excl or Take of other
// positions) the result is a new, canonical, writable COO holding a copy of the selected
// entries. A view's Get and Set cost what c's do; its NNZ, Values and conversions scan
// every entry of c. Slice fails with an error wrapping ndarray.ErrIndex where Dense.Slice
// would.
func (c *COO[T]) Slice(indices ...ndarray.Index) (*COO[T], error) {
	sels, err := ndarray.Select(c.shape(), indices...)
	if err != nil {
		return nil, fmt.Errorf("sparse: COO.Slice: %w", err)
	}
	for _, s := range sels {
		if s.Positions != nil {
			return c.gather(sels), nil
		}
	}
	old := c.win
	if old == nil {
		old = identityWindow(c.st.shape)
	}
	w := &window{fixed: append([]int64(nil), old.fixed...)}
	for _, s := range sels {
		if s.Axis < 0 {
			w.axes = append(w.axes, viewAxis{dim: -1})
			w.shape = append(w.shape, 1)
			continue
		}
		a := old.axes[s.Axis]
		switch {
		case a.dim < 0 && s.Fixed: // At(0) on a new axis drops it
		case a.dim < 0:
			w.axes = append(w.axes, viewAxis{dim: -1})
			w.shape = append(w.shape, s.Count)
		case s.Fixed:
			w.fixed[a.dim] = a.start + s.Start*a.step
		default:
			w.axes = append(w.axes, viewAxis{dim: a.dim, start: a.start + s.Start*a.step, step: a.step * s.Step})
			w.shape = append(w.shape, s.Count)
		}
	}
	if w.shape == nil {
		w.shape = ndarray.Shape{}
	}
	return &COO[T]{st: c.st, win: w, readOnly: c.readOnly}, nil
}

// gather copies the entries that sels select, at least one of them an explicit list of
// positions, into a new canonical COO.
func (c *COO[T]) gather(sels []ndarray.Selection) *COO[T] {
	var shape ndarray.Shape
	// For every explicit selection, the result positions of each source position.
	lookup := make([]map[int64][]int64, len(sels))
	for i, s := range sels {
		switch {
		case s.Axis < 0:
			shape = append(shape, 1)
		case s.Fixed:
		case s.Positions != nil:
			shape = append(shape, s.Dims...)
			lookup[i] = make(map[int64][]int64, len(s.Positions))
			for k, p := range s.Positions {
				lookup[i][p] = append(lookup[i][p], int64(k))
			}
		default:
			shape = append(shape, s.Count)
		}
	}
	if shape == nil {
		shape = ndarray.Shape{}
	}
	out := NewCOO[T](shape...)
	coord := make([]int64, len(shape))
	var emit func(src []int64, i, k int, v T)
	emit = func(src []int64, i, k int, v T) {
		if i == len(sels) {
			out.st.appendEntry(coord, v)
			return
		}
		s := sels[i]
		switch {
		case s.Axis < 0:
			coord[k] = 0
			emit(src, i+1, k+1, v)
		case s.Fixed:
			if src[s.Axis] == s.Start {
				emit(src, i+1, k, v)
			}
		case s.Positions != nil:
			for _, flat := range lookup[i][src[s.Axis]] {
				unravel(flat, s.Dims, coord[k:k+len(s.Dims)])
				emit(src, i+1, k+len(s.Dims), v)
			}
		default:
			off := src[s.Axis] - s.Start
			if j := off / s.Step; off%s.Step == 0 && j >= 0 && j < s.Count {
				coord[k] = j
				emit(src, i+1, k+1, v)
			}
		}
	}
	for src, v := range c.Entries() {
		emit(src, 0, 0, v)
	}
	out.st.canonical = out.st.sortedKeys()
	out.Canonicalize()
	return out
}

// appendEntry appends an entry without looking for its coordinate: the caller fixes the
// canonical flag.
func (s *cooStore[T]) appendEntry(coord []int64, v T) {
	for _, x := range coord {
		s.coords = s.coords.appendIndex(x)
	}
	s.values = append(s.values, v)
}
