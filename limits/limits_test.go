package limits_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ndarrow/ndarrow/limits"
)

func TestWithDefaultsKeepsWhatIsSet(t *testing.T) {
	d := limits.Default()
	assert.Equal(t, d, limits.Limits{}.WithDefaults(), "the zero value means the defaults")
	assert.Equal(t, d, limits.Limits{MaxRank: -1, MaxBodySize: -5}.WithDefaults(), "negative fields take their defaults")

	set := limits.Limits{MaxMetadataSize: 1, MaxBodySize: 2, MaxRank: 3, MaxElements: 4, MaxCopySize: 5, MaxDenseElements: 6}
	assert.Equal(t, set, set.WithDefaults(), "fields that are set stay")

	one := limits.Limits{MaxDenseElements: 10}.WithDefaults()
	assert.Equal(t, int64(10), one.MaxDenseElements)
	assert.Equal(t, d.MaxBodySize, one.MaxBodySize)
}

func TestErrExceededIsTheOneTest(t *testing.T) {
	err := fmt.Errorf("ipc: body of 9 bytes exceeds the limit of 8: %w", limits.ErrExceeded)
	assert.True(t, errors.Is(err, limits.ErrExceeded))
}

func ExampleLimits() {
	// Tighten what an upload may claim, keep every other default.
	lim := limits.Limits{MaxBodySize: 64 << 20}.WithDefaults()
	fmt.Println(lim.MaxBodySize, lim.MaxRank)
	// Output: 67108864 64
}
