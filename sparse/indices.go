package sparse

import (
	"fmt"
	"math"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Indices is a sequence of int32 or int64 indices — the coordinates or pointers of a sparse
// array. It is a view: it shares the slice it was made from.
type Indices struct {
	narrow []int32
	wide   []int64
	is64   bool
}

// Int32Indices returns Indices viewing v.
func Int32Indices(v []int32) Indices { return Indices{narrow: v} }

// Int64Indices returns Indices viewing v.
func Int64Indices(v []int64) Indices { return Indices{wide: v, is64: true} }

// makeIndices returns n zeroed indices of type t (ndarray.Int32 or ndarray.Int64).
func makeIndices(t ndarray.DType, n int) Indices {
	if t == ndarray.Int64 {
		return Int64Indices(make([]int64, n))
	}
	return Int32Indices(make([]int32, n))
}

// String returns the indices as Go prints a slice of their type, with the type in front:
// "int32[0 2 5]".
func (x Indices) String() string {
	if x.is64 {
		return fmt.Sprintf("int64%v", x.wide)
	}
	return fmt.Sprintf("int32%v", x.narrow)
}

// DType returns ndarray.Int32 or ndarray.Int64.
func (x Indices) DType() ndarray.DType {
	if x.is64 {
		return ndarray.Int64
	}
	return ndarray.Int32
}

// Len returns the number of indices.
func (x Indices) Len() int {
	if x.is64 {
		return len(x.wide)
	}
	return len(x.narrow)
}

// At returns index i.
func (x Indices) At(i int) int64 {
	if x.is64 {
		return x.wide[i]
	}
	return int64(x.narrow[i])
}

// set stores v, which fits the type, at i.
func (x Indices) set(i int, v int64) {
	if x.is64 {
		x.wide[i] = v
	} else {
		x.narrow[i] = int32(v)
	}
}

// Int32 returns the indices when their type is int32 (a view), and nil otherwise.
func (x Indices) Int32() []int32 { return x.narrow }

// Int64 returns the indices when their type is int64 (a view), and nil otherwise.
func (x Indices) Int64() []int64 { return x.wide }

// AsInt64 returns the indices as int64: a view when they are int64, a copy otherwise.
func (x Indices) AsInt64() []int64 {
	if x.is64 {
		return x.wide
	}
	out := make([]int64, len(x.narrow))
	for i, v := range x.narrow {
		out[i] = int64(v)
	}
	return out
}

// Bytes returns the indices as little-endian bytes: a view on little-endian machines.
func (x Indices) Bytes() []byte {
	if x.is64 {
		return ndarray.LittleEndianBytes(x.wide)
	}
	return ndarray.LittleEndianBytes(x.narrow)
}

// slice returns indices [lo, hi), a view.
func (x Indices) slice(lo, hi int) Indices {
	if x.is64 {
		return Int64Indices(x.wide[lo:hi])
	}
	return Int32Indices(x.narrow[lo:hi])
}

// clone returns a copy with room for extra more indices.
func (x Indices) clone(extra int) Indices {
	if x.is64 {
		return Int64Indices(append(make([]int64, 0, len(x.wide)+extra), x.wide...))
	}
	return Int32Indices(append(make([]int32, 0, len(x.narrow)+extra), x.narrow...))
}

// appendIndex returns x with v, which fits the type, appended.
func (x Indices) appendIndex(v int64) Indices {
	if x.is64 {
		x.wide = append(x.wide, v)
	} else {
		x.narrow = append(x.narrow, int32(v))
	}
	return x
}

// indexTypeFor returns the narrowest of int32 and int64 that holds every value in [0, max].
func indexTypeFor(max int64) ndarray.DType {
	if max <= math.MaxInt32 {
		return ndarray.Int32
	}
	return ndarray.Int64
}

// coordinateType returns the index type a shape's coordinates need.
func coordinateType(shape ndarray.Shape) ndarray.DType {
	m := int64(0)
	for _, n := range shape {
		m = max(m, n)
	}
	return indexTypeFor(m)
}

// checkIndexType fails unless t is int32 or int64.
func checkIndexType(t ndarray.DType) error {
	if t != ndarray.Int32 && t != ndarray.Int64 {
		return fmt.Errorf("index type %v, want int32 or int64: %w", t, ndarray.ErrDType)
	}
	return nil
}

// fits reports whether every value in [0, max] fits in indices of type t.
func fits(t ndarray.DType, max int64) bool { return t == ndarray.Int64 || max <= math.MaxInt32 }
