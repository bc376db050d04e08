package parquet

import (
	"io"

	"github.com/apache/arrow/go/v17/arrow"
)

// ReadGeneral makes r read every column through pqarrow alone, as before the direct path.
func ReadGeneral(r *Reader) { r.general = true }

// DirectReads returns the columns r read through the direct path.
func DirectReads(r *Reader) int { return r.directReads }

// NewGeneralWriter is NewWriter writing every file through pqarrow, as before the direct
// writer.
func NewGeneralWriter(w io.Writer, schema *arrow.Schema, opts WriterOptions) (*Writer, error) {
	return newWriter(w, schema, opts, false)
}

// ColumnChunkOffset returns where leaf column col of row group rg begins in the file.
func ColumnChunkOffset(r *Reader, rg, col int) int64 {
	return r.md.FileMetaData.RowGroups[rg].Columns[col].MetaData.DataPageOffset
}

// WritesDirectly reports whether w writes without pqarrow.
func WritesDirectly(w *Writer) bool { return w.direct != nil }
