//go:build !linux

package mmap

// Anonymous returns n bytes of zeroed memory of the heap: this platform's anonymous mappings
// are not used (see the Linux version).
func Anonymous(n int) ([]byte, error) { return make([]byte, n), nil }

// Discard does nothing: the memory is the heap's.
func Discard([]byte) {}
