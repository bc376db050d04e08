//go:build darwin || freebsd || netbsd

package fileid

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the change time of a stat's syscall.Stat_t (Ctimespec), zero without
// one.
func changeTime(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
	}
	return time.Time{}
}
