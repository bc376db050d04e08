package parquet

import (
	"encoding/binary"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hadoopFrame is one Hadoop LZ4 frame of data.
func hadoopFrame(t *testing.T, data []byte) []byte {
	block := make([]byte, lz4.CompressBlockBound(len(data)))
	n, err := lz4.CompressBlock(data, block, nil)
	require.NoError(t, err)
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = binary.BigEndian.AppendUint32(out, uint32(n))
	return append(out, block[:n]...)
}

// TestLz4Pages: LZ4_RAW blocks and Hadoop-framed LZ4 (one frame or several) decompress into
// exactly the page's declared size; anything else is an error, never a write past it.
func TestLz4Pages(t *testing.T) {
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i % 97)
	}
	raw := lz4Codec{}.Encode(nil, data)
	twoFrames := append(hadoopFrame(t, data[:3000]), hadoopFrame(t, data[3000:])...)
	lyingSize := hadoopFrame(t, data)
	binary.BigEndian.PutUint32(lyingSize, 1<<30)
	for _, tc := range []struct {
		name   string
		decode func(dst, src []byte) error
		src    []byte
		dst    int
		ok     bool
	}{
		{"raw", decodeLz4Raw, raw, len(data), true},
		{"raw, page declares more", decodeLz4Raw, raw, len(data) + 1, false},
		{"raw, page declares less", decodeLz4Raw, raw, len(data) - 1, false},
		{"raw, cut short", decodeLz4Raw, raw[:len(raw)/2], len(data), false},
		{"hadoop, one frame", decodeLz4Hadoop, hadoopFrame(t, data), len(data), true},
		{"hadoop, two frames", decodeLz4Hadoop, twoFrames, len(data), true},
		{"hadoop codec, a raw block", decodeLz4Hadoop, raw, len(data), true},
		{"hadoop, frames short of the page", decodeLz4Hadoop, hadoopFrame(t, data[:3000]), len(data), false},
		{"hadoop, a frame header cut short", decodeHadoopFrames, twoFrames[:len(twoFrames)-len(hadoopFrame(t, data[3000:]))+5], len(data), false},
		{"hadoop, a frame larger than the page", decodeHadoopFrames, lyingSize, len(data), false},
		{"empty", decodeLz4Raw, nil, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]byte, tc.dst+16)
			err := tc.decode(dst[:tc.dst], tc.src)
			if !tc.ok {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, data, dst[:tc.dst])
			}
			assert.Equal(t, make([]byte, 16), dst[tc.dst:], "nothing written past the page")
		})
	}
}
