package parquet

// ReadGeneral makes r read every column through pqarrow alone, as before the direct path.
func ReadGeneral(r *Reader) { r.general = true }

// DirectReads returns the columns r read through the direct path.
func DirectReads(r *Reader) int { return r.directReads }
