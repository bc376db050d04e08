package sentinel

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSentinelReadsOnceAndMatchesItsBase(t *testing.T) {
	base := errors.New("invalid")
	err := New("invalid .npy file", base)
	wrapped := fmt.Errorf("npy: header: %w", err)
	assert.Equal(t, "npy: header: invalid .npy file", wrapped.Error())
	assert.ErrorIs(t, wrapped, err)
	assert.ErrorIs(t, wrapped, base)
	assert.NotErrorIs(t, New("x", nil), base)
}
