package mmap

import (
	"os"
	"unsafe"

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

// Populate has the pages of b, part of a file's mapping, mapped in at once (MADV_POPULATE_READ,
// Linux 5.14): a system call that then reads b from user memory — a write of it to a file —
// takes no fault per 4 KiB page. It is advice: it fails silently (older kernels), and a page
// past the end of a file that shrank is left to fault when read.
func Populate(b []byte) {
	if len(b) == 0 {
		return
	}
	pg := uintptr(os.Getpagesize())
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := addr - addr&^(pg-1)                                          // b from its page's start: madvise takes whole pages
	start := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), -int(off)) // inside the mapping, which begins on a page
	_ = unix.Madvise(unsafe.Slice((*byte)(start), len(b)+int(off)), unix.MADV_POPULATE_READ)
}
