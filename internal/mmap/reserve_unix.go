//go:build unix

package mmap

import "syscall"

// reserve maps size bytes of address space that no page backs yet and whose every access
// faults.
func reserve(size int64) ([]byte, func([]byte) error, error) {
	if size != int64(int(size)) {
		return nil, nil, syscall.EFBIG
	}
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, nil, err
	}
	return b, syscall.Munmap, nil
}

// protect makes the pages of b, which starts at a page boundary, readable and writable
// (write) or fault again, their memory given back (!write).
func protect(b []byte, write bool) error {
	if !write {
		if err := syscall.Madvise(b, syscall.MADV_DONTNEED); err != nil {
			return err
		}
		return syscall.Mprotect(b, syscall.PROT_NONE)
	}
	return syscall.Mprotect(b, syscall.PROT_READ|syscall.PROT_WRITE)
}
