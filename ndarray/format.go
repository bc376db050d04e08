package ndarray

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/float16"
)

// Printing follows NumPy's str(): nested brackets, elements right-aligned to a common width,
// rows on their own lines, and arrays of more than summarizeOver elements summarized with
// "..." after the first and before the last edgeItems positions of each dimension.
const (
	summarizeOver = 1000
	edgeItems     = 3
)

// String formats the array the way NumPy prints one: "[[1 2 3]\n [4 5 6]]" for a 2×3 array,
// the bare value for a scalar, "[]" for an empty array. Large arrays are summarized with "...".
func (d *Dense[T]) String() string { return fmt.Sprint(d) }

// Format implements fmt.Formatter: %v and %s print as String does, and any other verb with
// its flags, width and precision formats each element (for example %.2f or %x), keeping the
// layout.
func (d *Dense[T]) Format(f fmt.State, verb rune) {
	cell := elementFormat[T](f, verb)
	if d.Size() == 0 {
		fmt.Fprint(f, "[]")
		return
	}
	p := printer[T]{d: d, cell: cell, summarize: d.Size() > summarizeOver}
	idx := make([]int64, 0, d.Rank())
	p.render(idx, 0) // measure the widest cell
	p.measured = true
	fmt.Fprint(f, p.render(idx, 0))
}

type printer[T Element] struct {
	d         *Dense[T]
	cell      func(T) string
	summarize bool
	width     int
	measured  bool
}

func (p *printer[T]) render(idx []int64, axis int) string {
	rank := p.d.Rank()
	if axis == rank {
		s := p.cell(p.d.Get(idx...))
		if !p.measured {
			p.width = max(p.width, len(s))
			return s
		}
		return strings.Repeat(" ", p.width-len(s)) + s
	}
	n := p.d.layout.Shape[axis]
	sep := " "
	if axis < rank-1 {
		sep = strings.Repeat("\n", rank-1-axis) + strings.Repeat(" ", axis+1)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		if p.summarize && n > 2*edgeItems && i == edgeItems {
			b.WriteString("...")
			b.WriteString(sep)
			i = n - edgeItems
		}
		b.WriteString(p.render(append(idx, i), axis+1))
	}
	b.WriteByte(']')
	return b.String()
}

// elementFormat returns the function that formats one element for the verb and flags in f.
func elementFormat[T Element](f fmt.State, verb rune) func(T) string {
	if verb == 'v' || verb == 's' {
		if _, ok := f.Precision(); !ok && !f.Flag('+') && !f.Flag('#') {
			return formatDefault[T]
		}
	}
	spec := fmt.FormatString(f, verb)
	return func(v T) string {
		if h, ok := any(v).(float16.Num); ok {
			return fmt.Sprintf(spec, h.Float32())
		}
		return fmt.Sprintf(spec, v)
	}
}

// formatDefault formats an element as NumPy's str() would, in Go's spelling: the shortest
// decimal that round-trips for floats, "true"/"false", and quoted strings.
func formatDefault[T Element](v T) string {
	switch x := any(v).(type) {
	case float16.Num:
		return strconv.FormatFloat(float64(x.Float32()), 'g', -1, 32)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}
