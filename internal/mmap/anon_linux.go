package mmap

import "syscall"

// Anonymous returns n bytes of zeroed memory outside the Go heap, a private anonymous
// mapping: the garbage collector neither zeroes nor scans it, and allocating it costs the
// allocating goroutine no collection work. It is never unmapped: whoever asks for it keeps it
// to hand out again, and Discards what is not in use. Where the platform maps nothing it is
// memory of the heap.
func Anonymous(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
}

// Discard gives the pages of b, memory from Anonymous, back to the system: b stays valid, and
// its pages read as zeros when next touched. It does nothing where the platform maps nothing.
func Discard(b []byte) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, syscall.MADV_DONTNEED) // advice: a failure leaves the pages held
	}
}
