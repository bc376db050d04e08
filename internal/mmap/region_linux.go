package mmap

import (
	"os"

	"golang.org/x/sys/unix"
)

// growRegion maps (b empty) or remaps b to at least n bytes, whole pages.
func growRegion(b []byte, n int) ([]byte, error) {
	pg := os.Getpagesize()
	n = (n + pg - 1) / pg * pg
	if len(b) == 0 {
		return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	}
	return unix.Mremap(b, n, unix.MREMAP_MAYMOVE)
}

// freeRegion unmaps b.
func freeRegion(b []byte) { _ = unix.Munmap(b) }

// shrinkRegion gives back the pages of b past its first n bytes, in place.
func shrinkRegion(b []byte, n int) []byte {
	pg := os.Getpagesize()
	n = max((n+pg-1)/pg*pg, pg)
	if n >= len(b) {
		return b
	}
	s, err := unix.Mremap(b, n, 0)
	if err != nil { // the pages stay: address space, and memory only where written
		return b
	}
	return s
}
