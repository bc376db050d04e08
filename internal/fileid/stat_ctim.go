//go:build linux || dragonfly || openbsd || solaris || aix

package fileid

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the change time of a stat's syscall.Stat_t (Ctim), zero without one.
func changeTime(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return time.Time{}
}
