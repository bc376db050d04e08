package table

import (
	"io/fs"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid"
)

// PiecesOf returns the reads Take makes of rows (ascending, distinct) of the columns named
// (nil: all): each its fragment and how many rows it reads.
func (t *Table) PiecesOf(rows []int64, columns []string) ([][2]int64, error) {
	cols, err := t.pick(columns)
	if err != nil {
		return nil, err
	}
	var out [][2]int64
	for _, p := range t.pieces(rows, cols) {
		out = append(out, [2]int64{int64(p.frag), int64(len(p.local))})
	}
	return out, nil
}

// ChangeTimeChars returns the characters of a cursor's fingerprint of a file that stand for
// its change time, as info says it.
func ChangeTimeChars(info fs.FileInfo) string {
	return hashChars(fpChanged, timeKey(fileid.ChangeTimeOf(info)), 2)
}

// InodeChars returns the characters of a cursor's fingerprint of a file that stand for its
// device and inode, as info says them.
func InodeChars(info fs.FileInfo) string {
	dev, ino := fileid.DevIno(info)
	return fingerprint(dataset.Identity{Device: dev, Inode: ino})[fpInode : fpInode+2]
}
