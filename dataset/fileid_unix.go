//go:build unix

package dataset

import (
	"io/fs"
	"syscall"
)

// fileID returns the device and inode number of the file info describes (zeros when the
// system does not say).
func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
