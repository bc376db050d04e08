//go:build unix

package mmap

import (
	"errors"
	"os"
	"syscall"
)

// mapFile maps the size bytes of the regular file f.
func mapFile(f *os.File, size int64) (*Mapping, error) {
	if size == 0 {
		return &Mapping{}, nil
	}
	if size != int64(int(size)) {
		return nil, syscall.EFBIG
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &Mapping{bytes: b, unmap: syscall.Munmap}, nil
}

// isEFAULT reports whether err is a system call's EFAULT: memory it was given could not be
// read.
func isEFAULT(err error) bool { return errors.Is(err, syscall.EFAULT) }
