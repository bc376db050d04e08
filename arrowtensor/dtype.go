package arrowtensor

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/ndarrow/ndarrow/ndarray"
)

// ErrUnsupported reports an Arrow type or layout that has no ndarray equivalent, such as a
// string tensor or a tensor with negative strides.
var ErrUnsupported = errors.New("unsupported by arrowtensor")

// DTypeFromArrow returns the element type of the Arrow numeric type dt (the inverse of
// ndarray.DType.ArrowType). Any other type fails with ErrUnsupported.
func DTypeFromArrow(dt arrow.DataType) (ndarray.DType, error) {
	if dt != nil {
		for _, d := range ndarray.DTypes() {
			if at := d.ArrowType(); at != nil && at.ID() == dt.ID() {
				return d, nil
			}
		}
	}
	return 0, fmt.Errorf("arrowtensor: Arrow type %v has no ndarray element type: %w", dt, ErrUnsupported)
}
