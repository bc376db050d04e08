package table

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
