//go:build !unix

package mmap

// reserve allocates size bytes of the heap: this platform maps nothing.
func reserve(size int64) ([]byte, func([]byte) error, error) {
	return make([]byte, size), nil, nil
}

// protect does nothing: the heap is always readable.
func protect([]byte, bool) error { return nil }
