package scratch

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile sizes f (sparse: no block is allocated) and maps it shared and read-only.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size != int64(int(size)) {
		return nil, unix.EFBIG
	}
	if err := f.Truncate(size); err != nil {
		return nil, err
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func unmap(b []byte) error { return unix.Munmap(b) }

func freeSpace(dir string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0
	}
	return int64(st.Bavail) * st.Bsize
}
