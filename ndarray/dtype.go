package ndarray

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"
)

// Integer is the constraint satisfied by the signed and unsigned integer element types.
type Integer interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// Float is the constraint satisfied by the floating-point element types.
type Float interface {
	float16.Num | float32 | float64
}

// Numeric is the constraint satisfied by every element type with an Arrow numeric type:
// the integers and the floats.
type Numeric interface {
	Integer | Float
}

// Element is the constraint satisfied by every element type an array can hold:
// the numeric types, bool and string.
type Element interface {
	Numeric | bool | string
}

// Family groups element types the way NumPy's dtype kinds do.
type Family uint8

// The element type families. Integer types are also Numeric; so are Float types.
const (
	FamilyBool Family = iota + 1
	FamilyInteger
	FamilyFloat
	FamilyString
)

// String returns the family's name: "bool", "integer", "float" or "string".
func (f Family) String() string {
	switch f {
	case FamilyBool:
		return "bool"
	case FamilyInteger:
		return "integer"
	case FamilyFloat:
		return "float"
	case FamilyString:
		return "string"
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// DType describes one element type: its NumPy-spelled name, its byte width, its family and,
// for numeric types, its Arrow data type. The zero DType is invalid.
type DType uint8

// The element types. Their order is stable and is part of the API.
const (
	Int8 DType = iota + 1
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	Float32
	Float64
	Bool
	String
)

type dtypeInfo struct {
	name   string
	size   int
	family Family
	signed bool
	arrow  arrow.DataType
}

var dtypes = [...]dtypeInfo{
	Int8:    {"int8", 1, FamilyInteger, true, arrow.PrimitiveTypes.Int8},
	Int16:   {"int16", 2, FamilyInteger, true, arrow.PrimitiveTypes.Int16},
	Int32:   {"int32", 4, FamilyInteger, true, arrow.PrimitiveTypes.Int32},
	Int64:   {"int64", 8, FamilyInteger, true, arrow.PrimitiveTypes.Int64},
	Uint8:   {"uint8", 1, FamilyInteger, false, arrow.PrimitiveTypes.Uint8},
	Uint16:  {"uint16", 2, FamilyInteger, false, arrow.PrimitiveTypes.Uint16},
	Uint32:  {"uint32", 4, FamilyInteger, false, arrow.PrimitiveTypes.Uint32},
	Uint64:  {"uint64", 8, FamilyInteger, false, arrow.PrimitiveTypes.Uint64},
	Float16: {"float16", 2, FamilyFloat, true, arrow.FixedWidthTypes.Float16},
	Float32: {"float32", 4, FamilyFloat, true, arrow.PrimitiveTypes.Float32},
	Float64: {"float64", 8, FamilyFloat, true, arrow.PrimitiveTypes.Float64},
	Bool:    {"bool", 1, FamilyBool, false, nil},
	String:  {"string", 0, FamilyString, false, nil},
}

// DTypes returns every valid DType in declaration order.
func DTypes() []DType {
	out := make([]DType, 0, len(dtypes)-1)
	for d := Int8; d <= String; d++ {
		out = append(out, d)
	}
	return out
}

// DTypeOf returns the DType of the element type T.
func DTypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case float16.Num:
		return Float16
	case float32:
		return Float32
	case float64:
		return Float64
	case bool:
		return Bool
	case string:
		return String
	}
	panic("unreachable: the Element constraint admits no other type")
}

// ParseDType returns the DType with the given name ("int8" … "uint64", "float16", "float32",
// "float64", "bool", "string"). It also accepts "half", "float", "double" and NumPy's "str".
func ParseDType(name string) (DType, error) {
	switch name {
	case "half":
		return Float16, nil
	case "float":
		return Float32, nil
	case "double":
		return Float64, nil
	case "str":
		return String, nil
	}
	for _, d := range DTypes() {
		if dtypes[d].name == name {
			return d, nil
		}
	}
	return 0, fmt.Errorf("ndarray: dtype %q: %w", name, ErrDType)
}

// Valid reports whether d is one of the declared element types.
func (d DType) Valid() bool { return d >= Int8 && d <= String }

func (d DType) info() dtypeInfo {
	if !d.Valid() {
		panic(fmt.Sprintf("ndarray: invalid DType(%d)", uint8(d)))
	}
	return dtypes[d]
}

// String returns the name of the type: NumPy's, such as "float32" or "bool", and "string" for
// strings (as Arrow and TensorFlow call them; NumPy's str is a fixed-width type). The CLI,
// JSON and Flight metadata use the same names.
func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypes[d].name
}

// Size returns the width of one element in bytes: 1 for bool, 0 for string, whose elements
// have no fixed width. Size panics on an invalid DType.
func (d DType) Size() int { return d.info().size }

// Family returns the type's family. It panics on an invalid DType.
func (d DType) Family() Family { return d.info().family }

// IsNumeric reports whether d is an integer or floating-point type.
func (d DType) IsNumeric() bool { return d.IsInteger() || d.IsFloat() }

// IsInteger reports whether d is a signed or unsigned integer type.
func (d DType) IsInteger() bool { return d.Valid() && dtypes[d].family == FamilyInteger }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d.Valid() && dtypes[d].family == FamilyFloat }

// IsSigned reports whether d can hold negative values (signed integers and floats).
func (d DType) IsSigned() bool { return d.Valid() && dtypes[d].signed }

// ArrowType returns the Arrow data type of a numeric DType and nil for bool and string, which
// Arrow tensors cannot hold. It panics on an invalid DType.
func (d DType) ArrowType() arrow.DataType { return d.info().arrow }

// sizeOf returns the in-memory width of T, which for every fixed-width Element equals its
// DType's Size.
func sizeOf[T any]() int {
	var zero T
	return int(unsafe.Sizeof(zero))
}
