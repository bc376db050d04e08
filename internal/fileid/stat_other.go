//go:build !unix

package fileid

import (
	"io/fs"
	"time"
)

// changeTime returns the zero time: this platform's stat gives no change time this package
// reads (Windows' gives a creation time, which a rewrite keeps), so Compare tells a rewrite by
// its size and modification time alone.
func changeTime(fs.FileInfo) time.Time { return time.Time{} }

// links returns 0: this platform's stat gives no link count this package reads.
func links(fs.FileInfo) uint64 { return 0 }

// devIno returns zeros: this platform's stat gives no device and inode numbers this package
// reads (os.SameFile still tells one file from another).
func devIno(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
