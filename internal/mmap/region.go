package mmap

// Region is memory outside the Go heap that grows in place: on Linux an anonymous mapping
// that Grow enlarges by remapping its pages (mremap), never copying what it holds, and whose
// pages take memory only once written; elsewhere heap memory that Grow copies. A result that
// grows as rows arrive (an upload whose size nobody announced) is held once, not twice while
// it moves. The zero Region is empty; Free gives its memory back. Not safe for concurrent
// use.
type Region struct {
	b []byte
}

// Bytes returns the region's memory: valid until the next Grow or Free.
func (r *Region) Bytes() []byte { return r.b }

// Grow makes the region at least n bytes long, keeping what it holds (the bytes past it read
// as zeros), and returns its memory, which may have moved: the bytes Bytes or Grow returned
// before are no longer valid.
func (r *Region) Grow(n int) ([]byte, error) {
	if n <= len(r.b) {
		return r.b, nil
	}
	b, err := growRegion(r.b, n)
	if err != nil {
		return nil, err
	}
	r.b = b
	return b, nil
}

// Shrink gives back the region's memory past its first n bytes (whole pages), which stays
// where it is: what was grown ahead of need, once no more is needed.
func (r *Region) Shrink(n int) {
	if n < len(r.b) {
		r.b = shrinkRegion(r.b, n)
	}
}

// Free gives the region's memory back; the region is empty after.
func (r *Region) Free() {
	if len(r.b) > 0 {
		freeRegion(r.b)
	}
	r.b = nil
}
