package ipc

import "math"

// Limits bound what a reader accepts, so that a small or hostile input cannot make it
// allocate or loop more than the caller allows. A zero field takes its default.
type Limits struct {
	// MaxMetadataSize bounds the flatbuffer metadata of one message, in bytes.
	// Default 16 MiB.
	MaxMetadataSize int64
	// MaxBodySize bounds the body of one message, in bytes. Default 16 GiB (clamped to the
	// largest int on 32-bit platforms).
	MaxBodySize int64
	// MaxRank bounds the number of dimensions of a tensor. Default 64.
	MaxRank int
	// MaxElements bounds the number of elements of a tensor. Default 2^40.
	MaxElements int64
}

// DefaultLimits returns the limits readers use when none are given.
func DefaultLimits() Limits {
	return Limits{
		MaxMetadataSize: 16 << 20,
		MaxBodySize:     min(16<<30, math.MaxInt),
		MaxRank:         64,
		MaxElements:     1 << 40,
	}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxMetadataSize <= 0 {
		l.MaxMetadataSize = d.MaxMetadataSize
	}
	if l.MaxBodySize <= 0 {
		l.MaxBodySize = d.MaxBodySize
	}
	if l.MaxRank <= 0 {
		l.MaxRank = d.MaxRank
	}
	if l.MaxElements <= 0 {
		l.MaxElements = d.MaxElements
	}
	return l
}
