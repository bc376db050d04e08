package scratch

import (
	"bytes"
	"fmt"
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

func freeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// punchHole gives the blocks of [off, off+n) back to the file system, keeping the file's size.
func punchHole(f *os.File, off, n int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}

func diskBytes(f *os.File) int64 {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0
	}
	return st.Blocks * 512
}

func addressSpaceLeft() (left, limit int64, limited bool) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &lim) != nil || lim.Cur == unix.RLIM_INFINITY || lim.Cur > 1<<62 {
		return 0, 0, false
	}
	var kb int64 // what is mapped now (0 when /proc cannot tell: the limit is an upper bound)
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range bytes.Split(status, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("VmSize:")); ok {
				_, _ = fmt.Sscanf(string(bytes.TrimSpace(rest)), "%d", &kb)
			}
		}
	}
	return max(int64(lim.Cur)-kb<<10, 0), int64(lim.Cur), true
}
