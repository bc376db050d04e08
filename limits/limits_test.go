package limits_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestExceededErrorMatchesItsSentinels: an ExceededError is ErrExceeded and its package's own
// sentinel, reads as its message, and errors.As finds it — field, need and limit — through
// the errors that wrap it.
func TestExceededErrorMatchesItsSentinels(t *testing.T) {
	own := errors.New("pkg: too large")
	for _, also := range []error{nil, own} {
		var err error = &limits.ExceededError{Field: "MaxDenseElements", Needs: 300, Limit: 100, Msg: "300 elements, above 100", Also: also}
		err = fmt.Errorf("x.npz: m: %w", err)
		assert.ErrorIs(t, err, limits.ErrExceeded)
		assert.Equal(t, also != nil, errors.Is(err, own))
		assert.Equal(t, "x.npz: m: 300 elements, above 100", err.Error())
		var e *limits.ExceededError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, limits.ExceededError{Field: "MaxDenseElements", Needs: 300, Limit: 100, Msg: "300 elements, above 100", Also: also}, *e)
	}
}
