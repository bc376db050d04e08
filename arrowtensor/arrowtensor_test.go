package arrowtensor

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

func TestDTypeFromArrow(t *testing.T) {
	for _, d := range ndarray.DTypes() {
		if !d.IsNumeric() {
			continue
		}
		got, err := DTypeFromArrow(d.ArrowType())
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	for _, dt := range []arrow.DataType{arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.ListOf(arrow.PrimitiveTypes.Int8), nil} {
		_, err := DTypeFromArrow(dt)
		assert.ErrorIs(t, err, ErrUnsupported)
	}
}

func sameMemory[T any](a, b *T) bool { return unsafe.Pointer(a) == unsafe.Pointer(b) }

func TestTensorRoundTripEveryType(t *testing.T) {
	t.Run("int8", func(t *testing.T) { tensorRoundTrip(t, func(i int) int8 { return int8(i) }) })
	t.Run("int16", func(t *testing.T) { tensorRoundTrip(t, func(i int) int16 { return int16(-i) }) })
	t.Run("int32", func(t *testing.T) { tensorRoundTrip(t, func(i int) int32 { return int32(i * 1000) }) })
	t.Run("int64", func(t *testing.T) { tensorRoundTrip(t, func(i int) int64 { return int64(i) << 40 }) })
	t.Run("uint8", func(t *testing.T) { tensorRoundTrip(t, func(i int) uint8 { return uint8(i) }) })
	t.Run("uint16", func(t *testing.T) { tensorRoundTrip(t, func(i int) uint16 { return uint16(i) }) })
	t.Run("uint32", func(t *testing.T) { tensorRoundTrip(t, func(i int) uint32 { return uint32(i) }) })
	t.Run("uint64", func(t *testing.T) { tensorRoundTrip(t, func(i int) uint64 { return uint64(i) << 50 }) })
	t.Run("float16", func(t *testing.T) { tensorRoundTrip(t, func(i int) float16.Num { return float16.New(float32(i) / 2) }) })
	t.Run("float32", func(t *testing.T) { tensorRoundTrip(t, func(i int) float32 { return float32(i) / 3 }) })
	t.Run("float64", func(t *testing.T) { tensorRoundTrip(t, func(i int) float64 { return float64(i) / 7 }) })
}

func tensorRoundTrip[T ndarray.Numeric](t *testing.T, value func(int) T) {
	d := ndarray.New[T](3, 4)
	for i := range d.Data() {
		d.Data()[i] = value(i)
	}
	for name, view := range map[string]*ndarray.Dense[T]{
		"row-major":    d,
		"column-major": d.Transpose(),
		"strided":      ndarray.Must(d.Slice(ndarray.All(), ndarray.Step(2))),
		"offset rows":  ndarray.Must(d.Slice(ndarray.From(1))),
	} {
		tn, err := ToTensor(memory.DefaultAllocator, view, []string{"a", "b"})
		require.NoError(t, err, name)
		assert.Equal(t, []int64(view.Shape()), tn.Shape(), name)
		assert.Equal(t, []string{"a", "b"}, tn.DimNames(), name)
		assert.Equal(t, view.Size(), int64(tn.Len()), name)
		assert.Equal(t, ndarray.DTypeOf[T]().ArrowType().ID(), tn.DataType().ID())
		back, err := FromTensor[T](tn)
		require.NoError(t, err, name)
		assert.True(t, back.Equal(view), name)
		if view.Layout().IsContiguous() {
			assert.True(t, back.SharesMemory(d), "%s: no copy either way", name)
			first := view.Layout().Offset
			assert.True(t, sameMemory(&back.Data()[0], &d.Data()[first]), name)
		} else {
			assert.False(t, back.SharesMemory(d), "%s: a strided view is copied", name)
			assert.True(t, tn.IsRowMajor(), name)
		}
		assert.Equal(t, name == "column-major", tn.IsColMajor() && !tn.IsRowMajor(), name)
		tn.Release()
	}
}

func TestFromTensorOfArrowGoTensor(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewFloat64Builder(mem)
	b.AppendValues([]float64{1, 2, 3, 4, 5, 6}, nil)
	arr := b.NewFloat64Array()
	b.Release()
	tn := tensor.NewFloat64(arr.Data(), []int64{3, 2}, []int64{8, 24}, nil) // column-major
	arr.Release()
	d, err := FromTensor[float64](tn)
	require.NoError(t, err)
	assert.Equal(t, "[[1. 4.]\n [2. 5.]\n [3. 6.]]", d.String())
	assert.Equal(t, !tn.IsMutable(), d.ReadOnly(), "a view of an immutable tensor is read-only")
	_, err = FromTensor[float32](tn)
	assert.ErrorIs(t, err, ndarray.ErrDType)
	tn.Release()

	bad := tensor.NewFloat64(array.NewData(arrow.PrimitiveTypes.Float64, 2, []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 16))}, nil, 0, 0), []int64{2}, []int64{12}, nil)
	_, err = FromTensor[float64](bad)
	assert.ErrorIs(t, err, ErrUnsupported, "a stride that is not a multiple of the width")
	outside := tensor.NewFloat64(array.NewData(arrow.PrimitiveTypes.Float64, 2, []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 16))}, nil, 0, 0), []int64{3}, []int64{8}, nil)
	_, err = FromTensor[float64](outside)
	assert.ErrorIs(t, err, ndarray.ErrLayout, "shape reaching past the buffer")
}

type expected struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	DType    string   `json:"dtype"`
	Shape    []int64  `json:"shape"`
	DimNames []string `json:"dim_names"`
	SHA256   string   `json:"sha256"`
	// Ragged columns only.
	NRows     int64     `json:"nrows"`
	NVals     int64     `json:"nvals"`
	RowSplits [][]int64 `json:"row_splits"`
}

const goldenDir = "testdata/arrow-cpp-17"

func loadExpected(t *testing.T) map[string]expected {
	f, err := os.Open(filepath.Join(goldenDir, "expected.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]expected{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e expected
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out[e.Name] = e
	}
	return out
}

// readGolden reads the golden record batch file or stream with arrow-go's own readers.
func readGolden(t *testing.T, mem memory.Allocator, name string) arrow.Record {
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	require.NoError(t, err)
	if filepath.Ext(name) == ".arrow" {
		r, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(mem))
		require.NoError(t, err)
		defer r.Close()
		require.Equal(t, 1, r.NumRecords())
		rec, err := r.Record(0)
		require.NoError(t, err)
		rec.Retain()
		return rec
	}
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	rec := r.Record()
	rec.Retain()
	return rec
}

func column(t *testing.T, rec arrow.Record, name string) *FixedShapeTensorArray {
	idx := rec.Schema().FieldIndices(name)
	require.Len(t, idx, 1)
	arr, ok := rec.Column(idx[0]).(*FixedShapeTensorArray)
	require.True(t, ok, "column %s is %T", name, rec.Column(idx[0]))
	return arr
}

func sha(t *testing.T, write func(io.Writer) (int64, error)) string {
	var buf bytes.Buffer
	_, err := write(&buf)
	require.NoError(t, err)
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

func TestGoldenFixedShapeTensorColumns(t *testing.T) {
	want := loadExpected(t)
	for _, file := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		t.Run(file, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := readGolden(t, mem, file)
			defer rec.Release()

			images := column(t, rec, "images")
			typ := images.ExtensionType().(*FixedShapeTensorType)
			assert.Equal(t, `{"shape":[2,3],"dim_names":["h","w"]}`, typ.Serialize())
			d, err := ToDense[float32](images)
			require.NoError(t, err)
			e := want["batch_tensors.images"]
			assert.Equal(t, e.Shape, []int64(d.Shape()))
			assert.Equal(t, e.DimNames, append([]string{""}, typ.LogicalDimNames()...), "C++ names the row dimension \"\"")
			assert.Equal(t, e.SHA256, sha(t, d.WriteTo))
			assert.True(t, d.ReadOnly())

			perm := column(t, rec, "perm")
			ptyp := perm.ExtensionType().(*FixedShapeTensorType)
			assert.Equal(t, `{"shape":[3,2],"permutation":[1,0]}`, ptyp.Serialize())
			p, err := ToDense[int64](perm)
			require.NoError(t, err)
			e = want["batch_tensors.perm"]
			assert.Equal(t, e.Shape, []int64(p.Shape()), "logical shape: the permutation applied")
			assert.Equal(t, e.SHA256, sha(t, p.WriteTo))
			assert.False(t, p.IsContiguous(), "a permuted view, not a copy")

			// Slices of the column read their own rows.
			sliced := array.NewSlice(images, 1, 3).(*FixedShapeTensorArray)
			defer sliced.Release()
			s, err := ToDense[float32](sliced)
			require.NoError(t, err)
			assert.True(t, s.Equal(ndarray.Must(d.Slice(ndarray.Range(1, 3)))))
		})
	}
}

// TestPermutationThreeCycle checks the spec's permutation semantics with a permutation that is
// not its own inverse (Arrow C++ 17 gets this one wrong): logical dimension i is physical
// dimension permutation[i].
func TestPermutationThreeCycle(t *testing.T) {
	physical := []int64{2, 3, 4}
	perm := []int{2, 0, 1}
	typ, err := NewFixedShapeTensorType(arrow.PrimitiveTypes.Int32, physical, perm, []string{"x", "y", "z"})
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{4, 2, 3}, typ.LogicalShape())
	assert.Equal(t, []string{"z", "x", "y"}, typ.LogicalDimNames())

	// One row whose physical cell, row-major, holds 100·a + 10·b + c at physical (a, b, c).
	var cell []int32
	for a := range 2 {
		for b := range 3 {
			for c := range 4 {
				cell = append(cell, int32(100*a+10*b+c))
			}
		}
	}
	child := array.NewData(arrow.PrimitiveTypes.Int32, len(cell), []*memory.Buffer{nil, memory.NewBufferBytes(ndarray.LittleEndianBytes(cell))}, nil, 0, 0)
	data := array.NewData(typ, 1, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	arr := array.MakeFromData(data).(*FixedShapeTensorArray)
	d, err := ToDense[int32](arr)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{1, 4, 2, 3}, d.Shape())
	for i := range int64(4) {
		for j := range int64(2) {
			for k := range int64(3) {
				// Logical (i, j, k) is physical index q with q[perm[0]]=i, q[perm[1]]=j, q[perm[2]]=k.
				var q [3]int64
				q[perm[0]], q[perm[1]], q[perm[2]] = i, j, k
				assert.Equal(t, int32(100*q[0]+10*q[1]+q[2]), d.Get(0, i, j, k), "logical (%d,%d,%d)", i, j, k)
			}
		}
	}
	arr.Release()
	data.Release()
	child.Release()
}

func TestFixedShapeMetadata(t *testing.T) {
	list := func(n int32, dt arrow.DataType) arrow.DataType {
		return arrow.FixedSizeListOfField(n, arrow.Field{Name: "item", Type: dt, Nullable: true})
	}
	for _, tc := range []struct {
		name    string
		storage arrow.DataType
		meta    string
		perm    []int
		names   []string
		reWrite string
	}{
		{"C++'s form", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[2,3],"permutation":[1,0],"dim_names":["h","w"]}`, []int{1, 0}, []string{"h", "w"}, ""},
		{"arrow-rs permutations and nulls", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[2,3],"permutations":[1,0],"dim_names":null}`, []int{1, 0}, nil, `{"shape":[2,3],"permutation":[1,0]}`},
		{"spaces and unknown keys", list(4, arrow.PrimitiveTypes.Int8), `{ "dim_names": ["a","b"], "shape": [2, 2], "extra": 1 }`, nil, []string{"a", "b"}, `{"shape":[2,2],"dim_names":["a","b"]}`},
		{"scalar cells", list(1, arrow.PrimitiveTypes.Int8), `{"shape":[]}`, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := (&FixedShapeTensorType{}).Deserialize(tc.storage, tc.meta)
			require.NoError(t, err)
			typ := got.(*FixedShapeTensorType)
			assert.Equal(t, tc.perm, typ.Permutation())
			assert.Equal(t, tc.names, typ.DimNames())
			want := tc.reWrite
			if want == "" {
				want = tc.meta
			}
			assert.Equal(t, want, typ.Serialize())
			again, err := typ.Deserialize(tc.storage, typ.Serialize())
			require.NoError(t, err)
			assert.True(t, typ.ExtensionEquals(again.(arrow.ExtensionType)))
		})
	}
	for _, tc := range []struct {
		name    string
		storage arrow.DataType
		meta    string
		err     error
	}{
		{"malformed JSON", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[2,3]`, ndarray.ErrShape},
		{"no shape", list(6, arrow.PrimitiveTypes.Float32), `{"dim_names":["a"]}`, ndarray.ErrShape},
		{"product differs from the list size", list(5, arrow.PrimitiveTypes.Float32), `{"shape":[2,3]}`, ndarray.ErrShape},
		{"negative dimension", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[-2,-3]}`, ndarray.ErrShape},
		{"not a permutation", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[2,3],"permutation":[0,0]}`, ndarray.ErrIndex},
		{"permutation too long", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[2,3],"permutation":[0,1,2]}`, ndarray.ErrIndex},
		{"too many dim names", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[2,3],"dim_names":["a","b","c"]}`, ndarray.ErrShape},
		{"storage not a fixed-size list", arrow.ListOf(arrow.PrimitiveTypes.Float32), `{"shape":[2,3]}`, ErrUnsupported},
		{"non-numeric values", list(6, arrow.BinaryTypes.String), `{"shape":[2,3]}`, ErrUnsupported},
		{"zero-size cells", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[0]}`, ErrUnsupported},
		{"unknown dimension", list(6, arrow.PrimitiveTypes.Float32), `{"shape":[-1,6]}`, ndarray.ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := (&FixedShapeTensorType{}).Deserialize(tc.storage, tc.meta)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// TestWriteFixedShapeColumnsWithArrowGo writes tensor columns through arrow-go's own IPC file
// and stream writers and reads them back: the schema metadata is what Arrow C++ wrote for the
// same column, and the values come back bit-exact.
func TestWriteFixedShapeColumnsWithArrowGo(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	golden := readGolden(t, mem, "batch_tensors.arrow")
	defer golden.Release()
	cppField := golden.Schema().Field(golden.Schema().FieldIndices("images")[0])
	want, err := ToDense[float32](column(t, golden, "images"))
	require.NoError(t, err)

	images := want.Clone()
	recs, err := Records(memory.DefaultAllocator, "images", images, []string{"h", "w"}, 3)
	require.NoError(t, err)
	require.Len(t, recs, 2, "4 rows in batches of 3")
	assert.Equal(t, int64(3), recs[0].NumRows())
	assert.Equal(t, int64(1), recs[1].NumRows())

	path := filepath.Join(t.TempDir(), "images.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(recs[0].Schema()), ipc.WithAllocator(mem))
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	file, err := os.ReadFile(path)
	require.NoError(t, err)

	r, err := ipc.NewFileReader(bytes.NewReader(file), ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Close()
	field := r.Schema().Field(0)
	assert.Equal(t, cppField.Type.(arrow.ExtensionType).Serialize(), field.Type.(arrow.ExtensionType).Serialize())
	assert.True(t, arrow.TypeEqual(cppField.Type, field.Type))
	var got []float32
	for i := range r.NumRecords() {
		rec, err := r.Record(i)
		require.NoError(t, err)
		d, err := ToDense[float32](rec.Column(0).(*FixedShapeTensorArray))
		require.NoError(t, err)
		got = append(got, slices.Collect(d.Values())...)
	}
	assert.Equal(t, slices.Collect(want.Values()), got)
}

func TestNewFixedShapeTensorArrayIsZeroCopy(t *testing.T) {
	d := ndarray.Must(ndarray.FromSlice([]uint16{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2))
	arr, err := NewFixedShapeTensorArray(memory.DefaultAllocator, d, nil)
	require.NoError(t, err)
	defer arr.Release()
	back, err := ToDense[uint16](arr)
	require.NoError(t, err)
	assert.True(t, back.SharesMemory(d))
	assert.True(t, back.Equal(d))

	strided := ndarray.Must(d.Slice(ndarray.All(), ndarray.Flip()))
	copied, err := NewFixedShapeTensorArray(memory.DefaultAllocator, strided, nil)
	require.NoError(t, err)
	defer copied.Release()
	back, err = ToDense[uint16](copied)
	require.NoError(t, err)
	assert.False(t, back.SharesMemory(d))
	assert.True(t, back.Equal(strided))

	_, err = NewFixedShapeTensorArray(memory.DefaultAllocator, ndarray.Scalar(uint16(1)), nil)
	assert.ErrorIs(t, err, ndarray.ErrShape)
	_, err = ToDense[int8](arr)
	assert.ErrorIs(t, err, ndarray.ErrDType)
	_, err = Records(memory.DefaultAllocator, "x", d, nil, 0)
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

// TestConstructorsAllocateFromMem: every Arrow-facing constructor takes the allocator first,
// views what it can (nothing allocated) and allocates from it what it must copy, all of which
// its Release gives back.
func TestConstructorsAllocateFromMem(t *testing.T) {
	d := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]*10 + i[1]) }, 6, 4)
	strided := ndarray.Must(d.Slice(ndarray.Step(2), ndarray.Flip()))
	m32 := sparse.FromDense(ndarray.FromFunc(func(i []int64) float64 { return float64((i[0] + i[1]) % 3) }, 4, 5))
	m, err := sparse.MakeCOO(m32.Shape(), sparse.Int64Indices(m32.Indices().AsInt64()), m32.Data())
	require.NoError(t, err)
	csr, err := m.Convert(sparse.FormatCSR)
	require.NoError(t, err)
	view, err := m.Slice(ndarray.Range(1, 3))
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		copies bool
		make   func(memory.Allocator) (interface{ Release() }, error)
	}{
		{"NewFixedShapeTensorArray contiguous", false, func(mem memory.Allocator) (interface{ Release() }, error) {
			return NewFixedShapeTensorArray(mem, d, nil)
		}},
		{"NewFixedShapeTensorArray strided", true, func(mem memory.Allocator) (interface{ Release() }, error) {
			return NewFixedShapeTensorArray(mem, strided, nil)
		}},
		{"Records strided", true, func(mem memory.Allocator) (interface{ Release() }, error) {
			recs, err := Records(mem, "x", strided, nil, 2)
			return releaseAll(recs), err
		}},
		{"ToTensor contiguous", false, func(mem memory.Allocator) (interface{ Release() }, error) { return ToTensor(mem, d, nil) }},
		{"ToTensor strided", true, func(mem memory.Allocator) (interface{ Release() }, error) { return ToTensor(mem, strided, nil) }},
		{"COORecord whole, int64 coordinates", false, func(mem memory.Allocator) (interface{ Release() }, error) {
			return COORecord(mem, m, nil)
		}},
		{"COORecord int32 coordinates", true, func(mem memory.Allocator) (interface{ Release() }, error) {
			return COORecord(mem, m32, nil)
		}},
		{"COORecord view", true, func(mem memory.Allocator) (interface{ Release() }, error) {
			return COORecord(mem, view, nil)
		}},
		{"SparseRecord", true, func(mem memory.Allocator) (interface{ Release() }, error) {
			return SparseRecord(mem, csr, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			x, err := tc.make(mem)
			require.NoError(t, err)
			if tc.copies {
				assert.Positive(t, mem.CurrentAlloc(), "the copy comes from mem")
			} else {
				assert.Zero(t, mem.CurrentAlloc(), "a view allocates nothing")
			}
			x.Release()
			mem.AssertSize(t, 0)
		})
	}
}

// releaseAll is a Release for several records.
type releaseAll []arrow.Record

func (rs releaseAll) Release() {
	for _, r := range rs {
		r.Release()
	}
}
