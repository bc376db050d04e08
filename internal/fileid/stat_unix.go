//go:build unix

package fileid

import (
	"io/fs"
	"syscall"
)

// links returns a stat's syscall.Stat_t's Nlink, 0 without one.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// devIno returns a stat's syscall.Stat_t's device and inode, zeros without one.
func devIno(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
