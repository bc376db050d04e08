package ndbeam

// EncodeBatch and DecodeBatch are Batch's coder.
var (
	EncodeBatch = encodeBatch
	DecodeBatch = decodeBatch
)
