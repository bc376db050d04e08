//go:build !linux

package mmap

// growRegion returns heap memory of n bytes holding b: this platform remaps nothing.
func growRegion(b []byte, n int) ([]byte, error) {
	grown := make([]byte, n)
	copy(grown, b)
	return grown, nil
}

// freeRegion does nothing: the memory is the heap's.
func freeRegion([]byte) {}

// shrinkRegion keeps b: heap memory is the collector's.
func shrinkRegion(b []byte, _ int) []byte { return b }

// Populate does nothing: this platform is not asked to map pages in ahead.
func Populate(b []byte) {}
