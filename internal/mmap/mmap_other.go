//go:build !unix

package mmap

import (
	"io"
	"os"
)

func mapFile(f *os.File) (*Mapping, error) {
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return &Mapping{bytes: b}, nil
}
