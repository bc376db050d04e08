//go:build !linux

package scratch

import (
	"errors"
	"os"
)

// errUnsupported: scratch files are made on Linux only.
var errUnsupported = errors.New("scratch files need Linux")

func mapFile(*os.File, int64) ([]byte, error) { return nil, errUnsupported }

func unmap([]byte) error { return nil }

func freeSpace(string) (int64, error) { return 0, errUnsupported }

func punchHole(*os.File, int64, int64) error { return errUnsupported }

func diskBytes(*os.File) int64 { return 0 }

func addressSpaceLeft() (int64, int64, bool) { return 0, 0, false }
