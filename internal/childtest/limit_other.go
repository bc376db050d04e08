//go:build !linux

package childtest

import "errors"

// limitAddressSpace is only implemented on Linux.
func limitAddressSpace(int64) error { return errors.New("not on Linux") }
