//go:build !linux

package scratch

import (
	"errors"
	"os"
)

// errUnsupported: only Linux allocates room before a write to a mapping (fallocate); without
// it a full disk would fault a writer, so other platforms keep no scratch file.
var errUnsupported = errors.New("scratch files need Linux")

func mapFile(*os.File, int64) ([]byte, error) { return nil, errUnsupported }

func allocate(*os.File, int64, int64) error { return errUnsupported }

func unmap([]byte) error { return nil }

func freeSpace(string) int64 { return 0 }
