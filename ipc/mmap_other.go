//go:build !unix

package ipc

import (
	"io"
	"os"
)

// mapFile reads f whole on platforms without mmap.
func mapFile(f *os.File) (*mapping, error) {
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return &mapping{bytes: b}, nil
}
