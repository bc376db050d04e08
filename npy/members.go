package npy

import (
	"archive/zip"
	"fmt"
)

// Member is a member of an .npz archive, as its central directory and local header say.
type Member struct {
	Name       string // the array's name: the member's without ".npy"
	Stored     bool   // stored as it is, not deflated
	DataOffset int64  // where the member's bytes start in the archive
	Size       int64  // the member's bytes in the archive
}

// NpzMembers returns the members of the .npz archive b, reading only its central directory
// and each member's local header (what a reader that brings the archive into memory range by
// range fetches first), with the checks ReadNpz makes of them: .npy members, no name twice,
// each member's bytes inside the archive. A stored member's bytes are a .npy file: ReadHeader
// reads its header at DataOffset.
func NpzMembers(b []byte, lim Limits) ([]Member, error) {
	files, names, err := npzFiles(b)
	if err != nil {
		return nil, err
	}
	var out []Member
	for i, f := range files {
		name := names[i]
		start, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("npz: member %q: %w: %w", f.Name, ErrInvalid, err)
		}
		size := f.CompressedSize64
		if start < 0 || uint64(start) > uint64(len(b)) || size > uint64(len(b))-uint64(start) {
			return nil, fmt.Errorf("npz: member %q: %d bytes at byte %d of a %d-byte archive: %w", f.Name, size, start, len(b), ErrInvalid)
		}
		if f.Method == zip.Store && f.UncompressedSize64 != size {
			return nil, fmt.Errorf("npz: member %q: stored, %d bytes of %d: %w", f.Name, size, f.UncompressedSize64, ErrInvalid)
		}
		out = append(out, Member{Name: name, Stored: f.Method == zip.Store, DataOffset: start, Size: int64(size)})
	}
	return out, nil
}
