// Package atomicfile writes a file so that it appears whole or not at all: through a
// temporary file beside it, renamed over it once complete. The CLI's outputs and
// dataset.Save both write this way.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Write creates a hidden temporary file beside path, with mode 0666 less the umask (the mode
// os.Create gives; os.CreateTemp would make it 0600 and the rename would keep that), has write
// fill it, and renames it over path once write returned nil and the file closed. On any
// failure the temporary file is removed and path is left as it was. Errors name path once,
// never the temporary file. write may register f.Name() for removal should the process be
// ended before Write returns.
func Write(path string, write func(f *os.File) error) error {
	tmp, err := create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, reason(err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, reason(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, reason(err))
	}
	done = true
	return nil
}

// create creates a new hidden file beside path, opened for reading and writing.
func create(path string) (*os.File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	for range 100 {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", base, rand.Uint32())), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fs.ErrExist
}

// reason returns what an os error wraps (its text names the temporary file), or err itself.
func reason(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
