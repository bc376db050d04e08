package tfio_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfio"
)

// table is ten rows of every kind and most dtypes of tensor.
func table(t *testing.T) []dataset.Tensor {
	images := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 60, 1)).Reshape(10, 2, 3))
	labels := ndarray.Must(ndarray.Arange[int64](0, 10, 1))
	mask := ndarray.New[bool](10, 2)
	mask.Set(true, 3, 1)
	words := ndarray.Must(ndarray.FromSlice([]string{"a", "bb", "", "d", "e", "f", "g", "h", "i", "jj"}, 10))
	halves := ndarray.New[float16.Num](10, 4)
	halves.Set(float16.New(1.5), 9, 3)
	ids, err := ragged.FromRowSplits([]int32{1, 2, 3, 4, 5, 6, 7}, []int64{0, 0, 3, 3, 3, 4, 4, 4, 5, 7, 7})
	require.NoError(t, err)
	coo := sparse.NewCOO[float64](10, 5)
	coo.Set(2.5, 7, 4)
	return []dataset.Tensor{
		{Name: "f.images", Column: "images", Kind: dataset.KindFixedShape, Dense: images},
		{Name: "f.labels", Column: "labels", Dense: labels},
		{Name: "f.mask", Column: "mask", Dense: mask},
		{Name: "f.words", Column: "words", Dense: words},
		{Name: "f.halves", Column: "halves", Dense: halves},
		{Name: "f.ids", Column: "ids", Kind: dataset.KindRagged, Ragged: ids},
		{Name: "f.sparse", Column: "sparse", Sparse: coo},
	}
}

// checkStreamBytes walks an IPC stream message by message and checks tensorflow-io's rules
// on the bytes: every message framed with the continuation marker and 8-byte-aligned metadata,
// a schema first and then record batches only (no dictionaries), field types from the list
// with no metadata, no compression, no nulls and no validity bitmap, and the end-of-stream
// marker as the last 8 bytes. It returns the number of batches.
func checkStreamBytes(t *testing.T, b []byte) int {
	t.Helper()
	require.GreaterOrEqual(t, len(b), 8)
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, b[len(b)-8:], "end-of-stream marker")
	batches := 0
	for off, i := 0, 0; ; i++ {
		require.Equal(t, uint32(0xffffffff), binary.LittleEndian.Uint32(b[off:]), "message %d: continuation marker", i)
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		if n == 0 {
			assert.Equal(t, len(b), off+8, "nothing after the end-of-stream marker")
			return batches
		}
		assert.Zero(t, (off+8+n)%8, "message %d: metadata padded to 8 bytes", i)
		meta := b[off+8 : off+8+n]
		require.NoError(t, arrowfb.VerifyMessage(meta))
		msg := arrowfb.GetRootAsMessage(meta, 0)
		assert.Zero(t, msg.CustomMetadataLength(), "message %d: custom metadata", i)
		var tab flatbuffers.Table
		require.True(t, msg.Header(&tab))
		switch msg.HeaderType() {
		case arrowfb.MessageHeaderSchema:
			require.Zero(t, i, "the schema comes first, once")
			var s arrowfb.Schema
			s.Init(tab.Bytes, tab.Pos)
			assert.Zero(t, s.CustomMetadataLength(), "schema metadata")
			for f := range s.FieldsLength() {
				var field arrowfb.Field
				require.True(t, s.Fields(&field, f))
				checkField(t, &field, true)
			}
		case arrowfb.MessageHeaderRecordBatch:
			require.NotZero(t, i)
			batches++
			var rb arrowfb.RecordBatch
			rb.Init(tab.Bytes, tab.Pos)
			assert.Nil(t, rb.Compression(nil), "no body compression")
			for j := range rb.NodesLength() {
				var node arrowfb.FieldNode
				require.True(t, rb.Nodes(&node, j))
				assert.Zero(t, node.NullCount(), "batch %d node %d: nulls", batches, j)
			}
		default:
			t.Fatalf("message %d: header %v: only a schema and record batches", i, msg.HeaderType())
		}
		off += 8 + n + int(msg.BodyLength())
	}
}

// checkField checks a field's type and metadata; lists only at the top.
func checkField(t *testing.T, f *arrowfb.Field, top bool) {
	t.Helper()
	assert.Zero(t, f.CustomMetadataLength(), "field %s: metadata", f.Name())
	assert.Nil(t, f.Dictionary(nil), "field %s: dictionary", f.Name())
	switch f.TypeType() {
	case arrowfb.TypeBool, arrowfb.TypeInt, arrowfb.TypeFloatingPoint, arrowfb.TypeUtf8, arrowfb.TypeBinary:
		assert.Zero(t, f.ChildrenLength())
	case arrowfb.TypeList:
		require.True(t, top, "field %s: a list inside a list", f.Name())
		require.Equal(t, 1, f.ChildrenLength())
		var child arrowfb.Field
		require.True(t, f.Children(&child, 0))
		checkField(t, &child, false)
	default:
		t.Errorf("field %s: type %v", f.Name(), f.TypeType())
	}
}

func TestStreamObeysTensorFlowIOsRules(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tensors := table(t)
	s, err := tfio.NewStream(tensors, 0)
	require.NoError(t, err)
	require.NoError(t, tfio.CheckTensorFlowIO(s.Schema()))
	assert.Equal(t, [][]int64{{2, 3}, nil, {2}, nil, {4}, {-1}, {5}}, s.RowShapes())
	var buf bytes.Buffer
	require.NoError(t, s.WriteTo(context.Background(), &buf, mem, 3))
	assert.Equal(t, 4, checkStreamBytes(t, buf.Bytes()), "10 rows in batches of 3")

	// arrow-go's stream reader stands in for tensorflow-io's Arrow C++.
	r, err := arrowipc.NewReader(bytes.NewReader(buf.Bytes()), arrowipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Release()
	var recs []arrow.Record
	for r.Next() {
		rec := r.Record()
		require.NoError(t, tfio.CheckTensorFlowIO(r.Schema(), rec))
		rec.Retain()
		recs = append(recs, rec)
	}
	require.NoError(t, r.Err())
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	defer tbl.Release()
	for _, rec := range recs {
		rec.Release()
	}
	require.EqualValues(t, 10, tbl.NumRows())
	col := func(name string) []string {
		idx := tbl.Schema().FieldIndices(name)
		require.Len(t, idx, 1, name)
		var out []string
		for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
			for i := range chunk.Len() {
				out = append(out, chunk.ValueStr(i))
			}
		}
		return out
	}
	assert.Equal(t, "[0,1,2,3,4,5]", col("images")[0], "a row's values in row-major order")
	assert.Equal(t, "[54,55,56,57,58,59]", col("images")[9])
	assert.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, col("labels"))
	assert.Equal(t, "[false,true]", col("mask")[3])
	assert.Equal(t, []string{"a", "bb", "", "d", "e", "f", "g", "h", "i", "jj"}, col("words"))
	assert.Equal(t, "[0,0,0,1.5]", col("halves")[9])
	assert.Equal(t, []string{"[]", "[1,2,3]", "[]", "[]", "[4]", "[]", "[]", "[5]", "[6,7]", "[]"}, col("ids"))
	assert.Equal(t, "[0,0,0,0,2.5]", col("sparse")[7], "a sparse tensor in its dense form")
}

func TestServeManyClientsOverTCPAndUnix(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := tfio.NewStream(table(t), 0)
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, s.WriteTo(context.Background(), &want, memory.NewGoAllocator(), 4))
	for _, endpoint := range []string{"tcp://127.0.0.1:0", "unix://" + filepath.Join(t.TempDir(), "tfio.sock")} {
		t.Run(endpoint[:3], func(t *testing.T) {
			ln, err := tfio.Listen(endpoint)
			require.NoError(t, err)
			network := ln.Addr().Network()
			addr := ln.Addr().String()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tfio.Serve(ctx, ln, s, tfio.Options{Allocator: mem, RowsPerBatch: 4}) }()
			var wg sync.WaitGroup
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					conn, err := net.Dial(network, addr)
					if !assert.NoError(t, err) {
						return
					}
					defer conn.Close()
					got, err := io.ReadAll(conn)
					assert.NoError(t, err)
					assert.Equal(t, want.Bytes(), got, "every client gets the whole stream, end marker included")
				}()
			}
			wg.Wait()
			cancel()
			require.NoError(t, <-done)
		})
	}
}

func TestListenTakesTensorFlowIOEndpoints(t *testing.T) {
	for _, bad := range []string{"tcp://localhost:0", "tcp://[::1]:0", "unix://", "udp://1.2.3.4:5", "1.2.3.4"} {
		_, err := tfio.Listen(bad)
		assert.Error(t, err, bad)
	}
	ln, err := tfio.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ln.Close()
}

func TestCheckTensorFlowIOStatesTheRules(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	field := func(typ arrow.DataType) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{{Name: "x", Type: typ}}, nil)
	}
	for _, tc := range []struct {
		name   string
		schema *arrow.Schema
	}{
		{"large_list", field(arrow.LargeListOf(arrow.PrimitiveTypes.Float32))},
		{"fixed_size_list", field(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32))},
		{"nested list", field(arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)))},
		{"large_utf8", field(arrow.BinaryTypes.LargeString)},
		{"list<utf8>", field(arrow.ListOf(arrow.BinaryTypes.String))},
		{"struct", field(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8}))},
		{"extension metadata", arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8,
			Metadata: arrow.NewMetadata([]string{"ARROW:extension:name"}, []string{"arrow.fixed_shape_tensor"})}}, nil)},
		{"schema metadata", arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8}}, func() *arrow.Metadata {
			md := arrow.NewMetadata([]string{"k"}, []string{"v"})
			return &md
		}())},
	} {
		assert.ErrorIs(t, tfio.CheckTensorFlowIO(tc.schema), tfio.ErrRule, tc.name)
	}
	b := array.NewInt32Builder(mem)
	defer b.Release()
	b.AppendValues([]int32{1, 2}, []bool{true, false})
	a := b.NewArray()
	defer a.Release()
	schema := field(arrow.PrimitiveTypes.Int32)
	rec := array.NewRecord(schema, []arrow.Array{a}, 2)
	defer rec.Release()
	err := tfio.CheckTensorFlowIO(schema, rec)
	assert.ErrorIs(t, err, tfio.ErrRule)
	assert.ErrorContains(t, err, "1 null values")
	_, err = tfio.NewStream([]dataset.Tensor{{Name: "a", Dense: ndarray.New[int8](2)}, {Name: "b", Dense: ndarray.New[int8](3)}}, 0)
	assert.ErrorContains(t, err, "b has 3 rows, a 2")
	_, err = tfio.NewStream([]dataset.Tensor{{Name: "s", Dense: ndarray.New[string](2, 2)}}, 0)
	assert.ErrorIs(t, err, tfio.ErrRule, "strings only one per row")
}

// TestFailedStreamHasNoEndMarker: a stream whose file was written in place while it was sent
// (its check fails), or that fails part way, ends without the end-of-stream marker, which
// tensorflow-io's reader takes for a failure; the file's change is the error, naming it.
func TestFailedStreamHasNoEndMarker(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	var b bytes.Buffer
	_, err := npy.Write(&b, ndarray.Full(float32(1), 64, 8))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	d, err := dataset.OpenDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	s, err := tfio.NewStream(d.Tensors, 0)
	require.NoError(t, err)
	s.SetCheck(d.CheckUnchanged)

	var whole bytes.Buffer
	require.NoError(t, dataset.Guard(func() error { return s.WriteTo(context.Background(), &whole, memory.NewGoAllocator(), 16) }))
	require.True(t, bytes.HasSuffix(whole.Bytes(), []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}))

	// Written in place (same size, other values), then renamed over by another file.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{1, 2, 3, 4}, int64(b.Len()-4))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(path+".new", b.Bytes(), 0o644))
	require.NoError(t, os.Rename(path+".new", path))

	var cut bytes.Buffer
	err = dataset.Guard(func() error { return s.WriteTo(context.Background(), &cut, memory.NewGoAllocator(), 16) })
	require.ErrorIs(t, err, dataset.ErrFileChanged)
	assert.ErrorContains(t, err, path)
	assert.False(t, bytes.HasSuffix(cut.Bytes(), []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}), "no end marker")
	assert.Less(t, cut.Len(), whole.Len())

	// Stopped part way: no end marker either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stopped bytes.Buffer
	require.ErrorIs(t, s.WriteTo(ctx, &stopped, memory.NewGoAllocator(), 16), context.Canceled)
	assert.False(t, bytes.HasSuffix(stopped.Bytes(), []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}))
}
