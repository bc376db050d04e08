package ipc

import "github.com/ndarrow/ndarrow/limits"

// Limits bound what a reader accepts, so that a small or hostile input cannot make it
// allocate or loop more than the caller allows; see package limits, where the fields and
// their defaults are defined. A zero field takes its default.
type Limits = limits.Limits

// DefaultLimits returns the limits readers use when none are given.
func DefaultLimits() Limits { return limits.Default() }
