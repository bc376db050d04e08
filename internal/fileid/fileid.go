// Package fileid says what a stat of a file tells of its version — its device and inode, size,
// modification time, change time (ctime) and links — and which of them differ between two
// stats of one file or one path (Compare), in words a user can act on (Change.String).
//
// The change time is the one a writer cannot set: a write stamps it, and so does every other
// change to the inode — chmod, chown, touch (setting the modification time back, as
// `rsync --inplace -t` does after writing in place), a rename of the file, a link made or
// removed. A write that keeps the size and restores the modification time is told by it alone.
package fileid

import (
	"io/fs"
	"os"
	"strings"
	"time"
)

// Change is the attributes of a file's identity that differ between two stats of it; 0 when
// none does.
type Change uint8

// The attributes a Change names.
const (
	Gone       Change = 1 << iota // the path names no file now
	Inode                         // another file: another device or inode (replaced)
	Size                          // the size
	ModTime                       // the modification time
	ChangeTime                    // the change time (ctime)
)

// Compare returns what differs between was and now, two stats of a file: Gone when now is
// nil, Inode when they are not of one file (os.SameFile), else each of Size, ModTime and
// ChangeTime that differs (times to the nanosecond, as the file system keeps them; a platform
// whose stat says no change time compares none).
func Compare(was, now fs.FileInfo) Change {
	switch {
	case now == nil:
		return Gone
	case was == nil || !os.SameFile(was, now):
		return Inode
	}
	var c Change
	if was.Size() != now.Size() {
		c |= Size
	}
	if !was.ModTime().Equal(now.ModTime()) {
		c |= ModTime
	}
	if !ChangeTimeOf(was).Equal(ChangeTimeOf(now)) {
		c |= ChangeTime
	}
	return c
}

// ChangeTimeOf returns the change time (ctime) of the file info describes: when its inode last
// changed, its contents or its metadata; the zero time where the platform's stat says none
// (see changeTime).
func ChangeTimeOf(info fs.FileInfo) time.Time { return changeTime(info) }

// LinksOf returns how many links (names) the file info describes has: 0 once it was removed
// or renamed over, while it is still open; 0 also where the platform's stat does not say.
func LinksOf(info fs.FileInfo) uint64 { return links(info) }

// DevIno returns the device and inode number of the file info describes (zeros where the
// platform's stat does not say).
func DevIno(info fs.FileInfo) (dev, ino uint64) { return devIno(info) }

// String says what changed, as a clause after "PATH changed since it was read: ": "its
// change time differs (…)", "its size and modification time differ (written to)", "its path
// names another file now (…)". It is "nothing changed" for 0.
func (c Change) String() string {
	switch {
	case c == 0:
		return "nothing changed"
	case c&Gone != 0:
		return "its path names no file now (removed, or renamed away)"
	case c&Inode != 0:
		return "its path names another file now (another device or inode: replaced)"
	}
	var names []string
	for _, a := range []struct {
		bit  Change
		name string
	}{{Size, "size"}, {ModTime, "modification time"}, {ChangeTime, "change time"}} {
		if c&a.bit != 0 {
			names = append(names, a.name)
		}
	}
	verb := " differs"
	if len(names) > 1 {
		verb = " differ"
	}
	var why string
	switch {
	case c&Size != 0:
		why = " (written to: truncated, rewritten or appended to)"
	case c&ModTime != 0:
		why = " (written to, or touched)"
	default:
		why = " (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)"
	}
	return "its " + joinNames(names) + verb + why
}

// joinNames joins names as a list in words: "a", "a and b", "a, b and c".
func joinNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
