package ndarray

import "math"

// Variances and standard deviations, as NumPy's var and std: the mean of the squared
// deviations from the mean, their sum divided by n - ddof (ddof 0: the population's; 1: the
// sample's, an unbiased estimate). Computed in float64 in two passes — the mean (pairwise
// summed, as Mean), then the squared deviations (compensated summation) — for every dtype, so
// that float32 and integer arrays keep their precision (NumPy computes a float32 array's in
// float32). n - ddof of 0 or less divides by 0: +Inf, or NaN where the deviations sum to 0
// (NumPy's answer, with its warning); an empty array's is NaN.

// Var returns the variance of every element of d with ddof delta degrees of freedom.
func Var[T Real](d *Dense[T], ddof int) float64 {
	d = d.orEmpty()
	n := d.Size()
	if n == 0 {
		return math.NaN()
	}
	mean := Mean(d)
	var sum, comp float64
	d.layout.lines(func(start, stride, m int64) bool {
		for i, p := int64(0), start; i < m; i, p = i+1, p+stride {
			sum, comp = addCompensated(sum, comp, sq(float64(d.data[p])-mean))
		}
		return true
	})
	return divideDOF(sum+comp, n, ddof)
}

// VarAxis returns the variances along axis (negative counts from the end) with ddof degrees
// of freedom, a new array of d's shape without that axis.
func VarAxis[T Real](d *Dense[T], axis, ddof int) (*Dense[float64], error) {
	return reduceAxisTo(d, axis, "VarAxis", false, func(data []T, start, stride, n int64) float64 {
		if n == 0 {
			return math.NaN()
		}
		mean := pairwiseSumFloat64(data, start, stride, n) / float64(n)
		var sum, comp float64
		for i, p := int64(0), start; i < n; i, p = i+1, p+stride {
			sum, comp = addCompensated(sum, comp, sq(float64(data[p])-mean))
		}
		return divideDOF(sum+comp, n, ddof)
	})
}

// Std returns the standard deviation of every element of d: the square root of Var.
func Std[T Real](d *Dense[T], ddof int) float64 { return math.Sqrt(Var(d, ddof)) }

// StdAxis returns the standard deviations along axis: the square roots of VarAxis.
func StdAxis[T Real](d *Dense[T], axis, ddof int) (*Dense[float64], error) {
	v, err := VarAxis(d, axis, ddof)
	if err != nil {
		return nil, err
	}
	for i, x := range v.data {
		v.data[i] = math.Sqrt(x)
	}
	return v, nil
}

func sq(x float64) float64 { return x * x }

// addCompensated adds x to the sum s whose lost low-order part is c (Neumaier's summation).
func addCompensated(s, c, x float64) (float64, float64) {
	t := s + x
	if math.Abs(s) >= math.Abs(x) {
		c += (s - t) + x
	} else {
		c += (x - t) + s
	}
	return t, c
}

// divideDOF divides a sum of n squared deviations by n - ddof, as NumPy does: by 0 when that is
// not positive.
func divideDOF(sum float64, n int64, ddof int) float64 {
	return sum / float64(max(n-int64(ddof), 0))
}
