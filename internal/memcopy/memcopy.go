// Package memcopy copies large slices without holding up the garbage collector.
//
// A copy is one runtime.memmove, which no signal interrupts: a goroutine in a long copy, or in
// a loop of nothing but copies, cannot be stopped for the collector to scan its stack, and the
// collector — with every goroutine that allocates meanwhile and has to help it — waits. Copy
// moves at most Chunk bytes per call, and each call is a point where the goroutine stops when
// asked.
package memcopy

import "unsafe"

// Chunk is the most bytes one call of Copy's moves at once.
const Chunk = 1 << 20

// Copy copies min(len(dst), len(src)) elements of src into dst, as the built-in copy does, at
// most Chunk bytes per call, and returns the number copied.
func Copy[T any](dst, src []T) int {
	n := min(len(dst), len(src))
	step := max(Chunk/int(unsafe.Sizeof(*new(T))), 1)
	for at := 0; at < n; {
		at += part(dst[at:n], src[at:min(at+step, n)])
	}
	return n
}

// part is copy, as a call the goroutine can be preempted at.
//
//go:noinline
func part[T any](dst, src []T) int { return copy(dst, src) }
