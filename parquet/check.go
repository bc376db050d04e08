package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/schema"

	"github.com/ndarrow/ndarrow/limits"
)

// What ndarrow checks before arrow-go's Parquet code sees a byte: the file's frame and
// footer here, each column chunk's pages (checkColumnChunk) before a row group is decoded.

const magic = "PAR1"

// maxSchemaDepth bounds the nesting of a Parquet schema (arrow-go builds it recursively). A
// list takes two levels, so this holds ragged tensors far beyond MaxRank.
const maxSchemaDepth = 256

// footerOf returns the Thrift FileMetaData of the Parquet file b, checked against b and lim.
func footerOf(b []byte, lim limits.Limits) ([]byte, error) {
	if len(b) < 12 || string(b[:4]) != magic {
		if len(b) >= 4 && string(b[:4]) == "PARE" {
			return nil, fmt.Errorf("parquet: an encrypted file: %w", ErrUnsupported)
		}
		return nil, fmt.Errorf("parquet: no PAR1 magic at the start: %w", ErrInvalid)
	}
	switch tail := string(b[len(b)-4:]); tail {
	case magic:
	case "PARE":
		return nil, fmt.Errorf("parquet: an encrypted footer: %w", ErrUnsupported)
	default:
		return nil, fmt.Errorf("parquet: no PAR1 magic at the end (%q): %w", tail, ErrInvalid)
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > int64(len(b))-12 {
		return nil, fmt.Errorf("parquet: a footer of %d bytes in a file of %d: %w", n, len(b), ErrInvalid)
	}
	if n > lim.MaxMetadataSize {
		return nil, fmt.Errorf("parquet: a footer of %d bytes, more than MaxMetadataSize %d: %w", n, lim.MaxMetadataSize, limits.ErrExceeded)
	}
	footer := b[int64(len(b))-8-n : len(b)-8]
	if err := checkFooter(footer); err != nil {
		return nil, fmt.Errorf("parquet: footer: %w", err)
	}
	return footer, nil
}

// checkFooter walks the whole FileMetaData struct (every length against its bytes) and checks
// that its schema list is one tree, nested at most maxSchemaDepth deep.
func checkFooter(footer []byte) error {
	c := compactReader{b: footer}
	var children []int32 // num_children of each SchemaElement, -1 when absent (a leaf)
	err := c.walkStruct(func(id int16, typ byte) (bool, error) {
		if id != 2 || typ != thriftList { // FileMetaData.schema
			return false, nil
		}
		n, elem, err := c.listHeader()
		if err != nil {
			return true, err
		}
		if elem != thriftStruct {
			return true, c.errorf("schema elements of type %d", elem)
		}
		children = make([]int32, 0, n)
		for i := 0; i < n; i++ {
			nc := int32(-1)
			err := c.walkStruct(func(id int16, typ byte) (bool, error) {
				if id != 5 || typ != thriftI32 { // SchemaElement.num_children
					return false, nil
				}
				v, err := c.i32()
				nc = v
				return true, err
			})
			if err != nil {
				return true, err
			}
			children = append(children, nc)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return checkSchemaTree(children)
}

// checkSchemaTree checks that a depth-first list of num_children values is exactly one tree.
func checkSchemaTree(children []int32) error {
	if len(children) == 0 || children[0] < 0 {
		return fmt.Errorf("no root schema element: %w", ErrInvalid)
	}
	open := []int32{children[0]} // children still to come of each group on the path
	for i, nc := range children[1:] {
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
		if len(open) == 0 {
			return fmt.Errorf("schema element %d is outside the tree: %w", i+1, ErrInvalid)
		}
		open[len(open)-1]--
		if nc > 0 {
			if open = append(open, nc); len(open) > maxSchemaDepth {
				return fmt.Errorf("a schema nested deeper than %d: %w", maxSchemaDepth, ErrUnsupported)
			}
		}
	}
	for _, n := range open {
		if n != 0 {
			return fmt.Errorf("schema elements announce %d children more than the schema holds: %w", n, ErrInvalid)
		}
	}
	return nil
}

// chunkCost is what decoding one column chunk may allocate, in bytes, and its number of
// levels (values, nulls included).
type chunkCost struct {
	bytes, levels int64
	streamSplit   bool // some page's values are BYTE_STREAM_SPLIT, which only the direct path reads
	deltaBytes    bool // some page's values are DELTA_BYTE_ARRAY, which only the direct path reads
}

// directOnly names the encoding of the chunk's values that only the direct path reads, ""
// when pqarrow reads them all.
func (c chunkCost) directOnly() string {
	switch {
	case c.streamSplit:
		return "BYTE_STREAM_SPLIT"
	case c.deltaBytes:
		return "DELTA_BYTE_ARRAY"
	}
	return ""
}

// valueEncodings are the encodings of a data page's values the reader lets arrow-go decode
// as they are: PLAIN, PLAIN_DICTIONARY, RLE, BIT_PACKED and RLE_DICTIONARY. Its DELTA_BINARY_PACKED
// and DELTA_LENGTH_BYTE_ARRAY decoders size buffers from counts inside the page before
// checking them (a header may ask for 2^64 miniblocks): those pages are walked first
// (checkDeltaPage). DELTA_BYTE_ARRAY pages are never given to arrow-go (the direct path reads
// them, in flat string and binary columns: directbytes.go), and arrow-go v17 decodes no values
// at all from BYTE_STREAM_SPLIT pages (the direct path reads those).
var valueEncodings = map[int32]bool{0: true, 2: true, 3: true, 4: true, 8: true}

// encodingByteStreamSplit is BYTE_STREAM_SPLIT, which arrow-go v17 does not decode: the
// direct path reads it (direct.go), for the columns it reads.
const encodingByteStreamSplit = 9

// The encodings of dictionary indices: PLAIN_DICTIONARY (Parquet 1's name) and
// RLE_DICTIONARY, both a bit width byte and the RLE/bit-packed hybrid.
const (
	encodingPlainDictionary = 2
	encodingRLEDictionary   = 8
)

// encodingName names a Parquet encoding.
func encodingName(e int32) string {
	if s := pq.Encoding(e).String(); s != "" {
		return s
	}
	return fmt.Sprintf("encoding %d", e)
}

// pageValues returns the values of data page page (its bytes after the header h): decompressed
// with codec (into a new buffer) and past its repetition and definition levels.
func pageValues(page []byte, h pageHeader, codec int32, descr *schema.Column) ([]byte, error) {
	decode := pageDecoders[codec]
	if codec != 0 && decode == nil {
		return nil, fmt.Errorf("codec %d", codec)
	}
	if h.typ == pageDataV2 {
		levels := int(h.repBytes) + int(h.defBytes)
		if h.repBytes < 0 || h.defBytes < 0 || levels > len(page) || int64(levels) > int64(h.uncompressed) {
			return nil, fmt.Errorf("levels of %d bytes", levels)
		}
		values := page[levels:]
		if codec != 0 && !h.v2Uncompressed {
			out := make([]byte, int(h.uncompressed)-levels)
			if err := decode(out, values); err != nil {
				return nil, err
			}
			values = out
		}
		return values, nil
	}
	if codec != 0 {
		out := make([]byte, h.uncompressed)
		if err := decode(out, page); err != nil {
			return nil, err
		}
		page = out
	}
	for _, lv := range []struct {
		max      int16
		encoding int32
	}{{descr.MaxRepetitionLevel(), h.repEncoding}, {descr.MaxDefinitionLevel(), h.defEncoding}} {
		if lv.max == 0 {
			continue
		}
		var size int64
		switch lv.encoding {
		case 3: // RLE, its length first
			if len(page) < 4 {
				return nil, errors.New("levels cut short")
			}
			size = 4 + int64(binary.LittleEndian.Uint32(page))
		case 4: // BIT_PACKED
			size = (int64(h.numValues)*int64(bits.Len16(uint16(lv.max))) + 7) / 8
		default:
			return nil, fmt.Errorf("levels in encoding %d", lv.encoding)
		}
		if size > int64(len(page)) {
			return nil, fmt.Errorf("levels of %d bytes in %d", size, len(page))
		}
		page = page[size:]
	}
	return page, nil
}

// checkDictionaryIndices checks the dictionary indices of a data page of n values (nulls among them):
// a bit width byte, then at most n indices in the RLE/bit-packed hybrid, every one — the last
// bit-packed group's padding too — inside a dictionary of entries entries (-1: none was seen).
func checkDictionaryIndices(values []byte, n, entries int64) error {
	if entries < 0 {
		return errors.New("no dictionary page before them")
	}
	if len(values) == 0 {
		if n == 0 {
			return nil
		}
		return errors.New("no bit width")
	}
	width := int(values[0])
	if width > 32 {
		return fmt.Errorf("bit width %d", width)
	}
	bad := -1
	_, ok := hybridPrefix(values[1:], width, n, func(v int, _ int64) bool {
		if int64(v) >= entries {
			bad = v
			return false
		}
		return true
	})
	switch {
	case bad >= 0:
		return fmt.Errorf("index %d of a dictionary of %d", bad, entries)
	case !ok:
		return errors.New("runs cut short")
	}
	return nil
}

// maxExpansion is the most a page may claim to grow when decompressed, per codec: beyond it
// the page cannot be valid (Snappy expands at most about 22-fold, LZ4 255-fold, DEFLATE
// 1032-fold, ZSTD 32768-fold; Brotli is given ZSTD's).
func maxExpansion(codec int32) int64 {
	switch codec {
	case 1: // SNAPPY
		return 24
	case codecLz4, codecLz4Raw:
		return 256
	case 2: // GZIP
		return 1032
	default:
		return 32768
	}
}

// checkColumnChunk checks leaf column col of row group rg of file b, described by md, the way
// arrow-go will read it: its byte range inside the file, then every page header it will
// decode, in order, until the chunk's values are all seen. It returns what decoding the chunk
// may allocate, which must stay within budget bytes and lim.MaxElements values.
func checkColumnChunk(b []byte, md *metadata.FileMetaData, rg, col int, budget int64, lim limits.Limits) (chunkCost, error) {
	var cost chunkCost
	cc := md.FileMetaData.RowGroups[rg].Columns[col]
	switch {
	case cc.FilePath != nil && *cc.FilePath != "":
		return cost, fmt.Errorf("its values are in another file (%q): %w", *cc.FilePath, ErrUnsupported)
	case cc.CryptoMetadata != nil || cc.EncryptedColumnMetadata != nil:
		return cost, fmt.Errorf("encrypted: %w", ErrUnsupported)
	case cc.MetaData == nil:
		return cost, fmt.Errorf("no column metadata: %w", ErrInvalid)
	}
	m := cc.MetaData
	switch m.Codec {
	case 0, 1, 2, 4, 6, codecLz4, codecLz4Raw: // UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD, LZ4s
	default:
		return cost, fmt.Errorf("compressed with %s: %w", m.Codec, ErrUnsupported)
	}
	start := m.DataPageOffset
	if m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 && start > *m.DictionaryPageOffset {
		start = *m.DictionaryPageOffset
	}
	size := int64(len(b))
	length := m.TotalCompressedSize
	if start < 0 || length < 0 || start > size || length > size-start {
		return cost, fmt.Errorf("bytes [%d, +%d) outside the file of %d bytes: %w", start, length, size, ErrInvalid)
	}
	if md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		length += min(100, size-start-length) // what arrow-go adds for parquet-mr ≤ 1.2.8 (PARQUET-816)
	}
	if m.NumValues < 0 {
		return cost, fmt.Errorf("%d values: %w", m.NumValues, ErrInvalid)
	}
	descr := md.Schema.Column(col)
	var width int64 // of one decoded value
	isBytes := false
	switch descr.PhysicalType() {
	case pq.Types.Boolean:
		width = 1
	case pq.Types.Int32, pq.Types.Float:
		width = 4
	case pq.Types.Int64, pq.Types.Double:
		width = 8
	case pq.Types.Int96:
		width = 12
	case pq.Types.ByteArray:
		width, isBytes = 4, true // an offset; the bytes themselves are counted from the pages
	case pq.Types.FixedLenByteArray:
		width = int64(descr.TypeLength())
		if width <= 0 {
			return cost, fmt.Errorf("fixed-length byte arrays of %d bytes: %w", width, ErrInvalid)
		}
	default:
		return cost, fmt.Errorf("physical type %d: %w", descr.PhysicalType(), ErrInvalid)
	}
	chunk := b[start : start+length]
	cost.bytes = length // arrow-go reads the whole chunk into memory
	var seen, maxPage int64
	entries := int64(-1) // the dictionary's, once its page is seen
	for pos := 0; seen < m.NumValues; {
		if pos >= len(chunk) {
			return cost, fmt.Errorf("%d of its %d values in its pages: %w", seen, m.NumValues, ErrInvalid)
		}
		h, err := readPageHeader(chunk[pos:])
		if err != nil {
			return cost, fmt.Errorf("page at byte %d: %w", start+int64(pos), err)
		}
		at := start + int64(pos)
		pos += h.headerLen
		comp, unc := int64(h.compressed), int64(h.uncompressed)
		if comp < 0 || unc < 0 || comp > int64(len(chunk)-pos) {
			return cost, fmt.Errorf("page at byte %d: %d bytes (%d uncompressed) with %d left in the chunk: %w", at, comp, unc, len(chunk)-pos, ErrInvalid)
		}
		pos += int(comp)
		if m.Codec != 0 && unc > comp*maxExpansion(int32(m.Codec))+64 {
			return cost, fmt.Errorf("page at byte %d: %d bytes cannot decompress to %d: %w", at, comp, unc, ErrInvalid)
		}
		maxPage = max(maxPage, unc)
		n := int64(h.numValues)
		var delta []byte   // a DELTA page's bytes, to walk once the page is known to fit the budget
		var indices []byte // a page of dictionary indices', likewise
		switch h.typ {
		case pageData, pageDataV2:
			if !h.hasNumValues || n < 0 {
				return cost, fmt.Errorf("page at byte %d: %d values: %w", at, n, ErrInvalid)
			}
			phys := descr.PhysicalType()
			if h.encoding == encodingByteStreamSplit && !isBytes && phys != pq.Types.Boolean && phys != pq.Types.Int96 {
				cost.streamSplit = true
			} else if h.encoding == encodingDeltaByteArray && phys == pq.Types.ByteArray {
				cost.deltaBytes = true // walked, bounded and decoded by readDirectBytes alone
			} else if h.encoding == encodingDeltaBinaryPacked && (phys == pq.Types.Int32 || phys == pq.Types.Int64) ||
				h.encoding == encodingDeltaLengthByteArray && isBytes {
				delta = chunk[pos-int(comp) : pos]
			} else if !valueEncodings[h.encoding] {
				return cost, fmt.Errorf("page at byte %d: values in the %s encoding: %w", at, encodingName(h.encoding), ErrUnsupported)
			} else if h.encoding == encodingPlainDictionary || h.encoding == encodingRLEDictionary {
				indices = chunk[pos-int(comp) : pos]
			}
			if h.levelsBytes > min(unc, comp) {
				return cost, fmt.Errorf("page at byte %d: %d bytes of levels in a page of %d: %w", at, h.levelsBytes, min(unc, comp), ErrInvalid)
			}
			seen += n
			cost.levels += n
			// values, two int16 levels and a validity bit per value
			cost.bytes += n * (width + 5)
			if isBytes {
				cost.bytes += unc
			}
		case pageDictionary:
			// a PLAIN dictionary: every value takes at least width bytes of the page
			if !h.hasNumValues || n < 0 || n*width > unc {
				return cost, fmt.Errorf("page at byte %d: a dictionary of %d values in %d bytes: %w", at, n, unc, ErrInvalid)
			}
			cost.bytes += n*width + unc
			entries = n
		}
		if cost.levels > lim.MaxElements {
			return cost, fmt.Errorf("page at byte %d: more than MaxElements %d values: %w", at, lim.MaxElements, limits.ErrExceeded)
		}
		if cost.bytes+maxPage > budget {
			return cost, fmt.Errorf("page at byte %d: decoding would take more than the %d bytes MaxCopySize leaves: %w", at, budget, limits.ErrExceeded)
		}
		if delta != nil {
			values, err := pageValues(delta, h, int32(m.Codec), descr)
			if err == nil {
				err = checkDeltaPage(h.encoding, values, n, 8*int(width))
			}
			if err != nil {
				return cost, fmt.Errorf("page at byte %d: %s: %v: %w", at, encodingName(h.encoding), err, ErrInvalid)
			}
		}
		if indices != nil { // arrow-go sizes a buffer by the largest index before checking it
			values, err := pageValues(indices, h, int32(m.Codec), descr)
			if err == nil {
				err = checkDictionaryIndices(values, n, entries)
			}
			if err != nil {
				return cost, fmt.Errorf("page at byte %d: dictionary indices: %v: %w", at, err, ErrInvalid)
			}
		}
	}
	cost.bytes += maxPage // the decompression buffer
	return cost, nil
}
