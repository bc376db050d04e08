//go:build !linux

package childtest

// limitAddressSpace is only implemented on Linux.
func limitAddressSpace(int64) error { return errNoLimits }
