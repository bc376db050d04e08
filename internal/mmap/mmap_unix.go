//go:build unix

package mmap

import (
	"errors"
	"math"
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

// descriptorBudget returns how many files mappings may keep open: half the soft limit of
// open files.
func descriptorBudget() int64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return int64(min(lim.Cur/2, math.MaxInt64))
}
