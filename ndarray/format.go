package ndarray

import (
	"fmt"
	"math"
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
func (d *Dense[T]) String() string {
	d = d.orEmpty()
	return fmt.Sprint(d)
}

// Format implements fmt.Formatter: %v and %s print as String does, and any other verb with
// its flags, width and precision formats each element (for example %.2f or %x), keeping the
// layout.
func (d *Dense[T]) Format(f fmt.State, verb rune) {
	d = d.orEmpty()
	if d.Size() == 0 {
		fmt.Fprint(f, "[]")
		return
	}
	p := printer[T]{d: d, summarize: d.Size() > summarizeOver}
	idx := make([]int64, 0, d.Rank())
	p.walk(idx, 0, nil) // collect the printed values
	p.cells = formatCells(p.values, f, verb)
	whole := 0 // the widest cell with no decimal point to align, such as NaN
	for _, s := range p.cells {
		if d.DType() == String {
			break // NumPy does not align strings
		}
		l, r := p.split(s)
		if r == 0 {
			whole = max(whole, l)
			continue
		}
		p.left, p.right = max(p.left, l), max(p.right, r)
	}
	p.left = max(p.left, whole-p.right)
	var b strings.Builder
	p.walk(idx, 0, &b)
	fmt.Fprint(f, b.String())
}

// printer walks the printed elements of an array twice: once to collect their values, once
// to write their cells aligned on the decimal point.
type printer[T Element] struct {
	d         *Dense[T]
	summarize bool
	values    []T
	cells     []string
	next      int
	// left is the widest part of a cell before its decimal point (the whole cell when there is
	// none), right the widest part from it on.
	left, right int
}

// split returns the lengths of s before and from its decimal point; only floats have one.
func (p *printer[T]) split(s string) (int, int) {
	if p.d.DType().IsFloat() {
		if i := strings.IndexAny(s, ".e"); i >= 0 && !strings.ContainsAny(s, "NI") {
			return i, len(s) - i
		}
	}
	return len(s), 0
}

func (p *printer[T]) walk(idx []int64, axis int, b *strings.Builder) {
	rank := p.d.Rank()
	if axis == rank {
		if b == nil {
			p.values = append(p.values, p.d.Get(idx...))
			return
		}
		s := p.cells[p.next]
		p.next++
		l, r := p.split(s)
		if r == 0 { // right-align cells with no decimal point
			l, r = l-p.right, p.right
		}
		b.WriteString(strings.Repeat(" ", max(p.left-l, 0)))
		b.WriteString(s)
		b.WriteString(strings.Repeat(" ", max(p.right-r, 0)))
		return
	}
	n := p.d.layout.Shape[axis]
	sep := " "
	if axis < rank-1 {
		sep = strings.Repeat("\n", rank-1-axis) + strings.Repeat(" ", axis+1)
	}
	if b != nil {
		b.WriteByte('[')
	}
	for i := int64(0); i < n; i++ {
		if i > 0 && b != nil {
			b.WriteString(sep)
		}
		if p.summarize && n > 2*edgeItems && i == edgeItems {
			if b != nil {
				b.WriteString("...")
				b.WriteString(sep)
			}
			i = n - edgeItems
		}
		p.walk(append(idx, i), axis+1, b)
	}
	if b != nil {
		b.WriteByte(']')
	}
}

// formatCells formats the printed values for the verb and flags in f: for %v and %s without
// flags, the way NumPy's str() does; otherwise each value with the verb.
func formatCells[T Element](values []T, f fmt.State, verb rune) []string {
	cells := make([]string, len(values))
	_, hasPrec := f.Precision()
	if (verb == 'v' || verb == 's') && !hasPrec && !f.Flag('+') && !f.Flag('#') {
		if DTypeOf[T]().IsFloat() {
			return formatFloats(values)
		}
		for i, v := range values {
			if s, ok := any(v).(string); ok {
				cells[i] = strconv.Quote(s)
			} else {
				cells[i] = fmt.Sprint(v)
			}
		}
		return cells
	}
	spec := fmt.FormatString(f, verb)
	for i, v := range values {
		if h, ok := any(v).(float16.Num); ok {
			cells[i] = fmt.Sprintf(spec, HalfToFloat64(h))
		} else {
			cells[i] = fmt.Sprintf(spec, v)
		}
	}
	return cells
}

// formatFloats follows NumPy's default float printing (precision 8, floatmode "maxprec"):
// positional notation with the fewest digits that represent each value uniquely, at most 8
// after the point, and a trailing point for integral values ("10."),
// unless the values span more than three orders of magnitude, reach 1e8 or go below 1e-4, in
// which case all are printed in exponent notation with a common number of digits.
func formatFloats[T Element](values []T) []string {
	bits := 64
	fs := make([]float64, len(values))
	for i, v := range values {
		switch x := any(v).(type) {
		case float16.Num:
			fs[i], bits = HalfToFloat64(x), 16
		case float32:
			fs[i], bits = float64(x), 32
		case float64:
			fs[i] = x
		}
	}
	minAbs, maxAbs := math.Inf(1), 0.0
	for _, x := range fs {
		if a := math.Abs(x); a != 0 && !math.IsInf(a, 0) && !math.IsNaN(a) {
			minAbs, maxAbs = min(minAbs, a), max(maxAbs, a)
		}
	}
	exp := maxAbs > 0 && (maxAbs >= 1e8 || minAbs < 1e-4 || maxAbs/minAbs > 1e3)
	cells := make([]string, len(fs))
	if !exp {
		for i, x := range fs {
			s := shortestUpTo8(x, 'f', bits)
			if !strings.ContainsAny(s, ".IN") {
				s += "."
			}
			cells[i] = s
		}
		return cells
	}
	digits := 0
	for _, x := range fs {
		s := shortestUpTo8(x, 'e', bits)
		if i, j := strings.IndexByte(s, '.'), strings.IndexByte(s, 'e'); i >= 0 && j > i {
			digits = max(digits, j-i-1)
		}
	}
	for i, x := range fs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			cells[i] = formatFloat(x, 'g', -1, bits)
			continue
		}
		s := formatFloat(x, 'e', digits, bits)
		if digits == 0 {
			s = strings.Replace(s, "e", ".e", 1) // NumPy's "1.e+09"
		}
		cells[i] = s
	}
	return cells
}

// shortestUpTo8 formats x in format 'f' or 'e' with the fewest fractional digits that read
// back as x, or, when that takes more than 8, rounded to 8 and stripped of trailing zeros, as
// NumPy's default precision prints it (0.10000000000000009 is "0.1").
func shortestUpTo8(x float64, format byte, bits int) string {
	s := formatFloat(x, format, -1, bits)
	point := strings.IndexByte(s, '.')
	if point < 0 {
		return s
	}
	end := len(s)
	if format == 'e' {
		end = strings.IndexByte(s, 'e')
	}
	if end-point-1 <= 8 {
		return s
	}
	s = formatFloat(x, format, 8, bits)
	if format == 'e' {
		end = strings.IndexByte(s, 'e')
		mantissa := strings.TrimRight(s[:end], "0")
		return strings.TrimSuffix(mantissa, ".") + s[end:]
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
