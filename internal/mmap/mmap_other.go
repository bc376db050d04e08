//go:build !unix

package mmap

import (
	"io"
	"os"
)

// mapFile reads the regular file f whole: this platform maps nothing.
func mapFile(f *os.File, _ int64) (*Mapping, error) {
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return &Mapping{bytes: b}, nil
}

// isEFAULT reports false: nothing is mapped here.
func isEFAULT(error) bool { return false }

// descriptorBudget returns 0: nothing is mapped here, so no file is kept open.
func descriptorBudget() int64 { return 0 }
