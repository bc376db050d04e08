package ipc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ragged"
)

// raggedStream returns an IPC stream of one record batch with list columns: a list<int16>
// with a null slot spanning values, a large_list<list<float64>> and a
// fixed_size_list<list<uint8>>.
func raggedStream(tb testing.TB) []byte {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.ListOf(arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "b", Type: arrow.LargeListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64)), Nullable: true},
		{Name: "c", Type: arrow.FixedSizeListOf(2, arrow.ListOf(arrow.PrimitiveTypes.Uint8)), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	la := b.Field(0).(*array.ListBuilder)
	lb := b.Field(1).(*array.LargeListBuilder)
	lc := b.Field(2).(*array.FixedSizeListBuilder)
	for i := range 5 {
		if i == 2 {
			la.AppendNull()
		} else {
			la.Append(true)
			for j := range i {
				la.ValueBuilder().(*array.Int16Builder).Append(int16(i*10 + j))
			}
		}
		lb.Append(true)
		inner := lb.ValueBuilder().(*array.ListBuilder)
		for j := range i % 3 {
			inner.Append(true)
			for k := range j + 1 {
				inner.ValueBuilder().(*array.Float64Builder).Append(float64(i) + float64(k)/4)
			}
		}
		lc.Append(true)
		pairs := lc.ValueBuilder().(*array.ListBuilder)
		for j := range 2 {
			pairs.Append(true)
			for k := range (i + j) % 3 {
				pairs.ValueBuilder().(*array.Uint8Builder).Append(uint8(i + j + k))
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestRaggedStreamColumns(t *testing.T) {
	_, recs, err := ReadRecordBatches(raggedStream(t), BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer recs[0].Release()
	want := []string{
		"[[], [10], [], [30, 31, 32], [40, 41, 42, 43]]",
		"[[], [[1]], [[2], [2, 2.25]], [], [[4]]]",
		"[[[], [1]], [[1], [2, 3]], [[2, 3], []], [[], [4]], [[4], [5, 6]]]",
	}
	for c, w := range want {
		a, err := arrowtensor.RaggedFromListAny(recs[0].Column(c))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		if a.String() != w {
			t.Errorf("column %d: %s, want %s", c, a, w)
		}
		readRagged(t, a)
	}
}

// readRagged reads every value of a through the public API and checks that it survives a
// round trip through a large_list array.
func readRagged(t *testing.T, a ragged.Any) {
	t.Helper()
	_ = a.String()
	var before, after bytes.Buffer
	if _, err := a.WriteTo(&before); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	list, err := arrowtensor.ListFromRaggedAny(mem, a, arrow.LARGE_LIST)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	defer list.Release()
	back, err := arrowtensor.RaggedFromListAny(list)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if _, err := back.WriteTo(&after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Fatal("values differ after a round trip")
	}
	want, got := a.RowSplits(), back.RowSplits()
	if len(want) != len(got) {
		t.Fatalf("%d levels after a round trip, want %d", len(got), len(want))
	}
	for l := range want {
		if !slices.Equal(want[l], got[l]) {
			t.Fatalf("level %d: row splits %v after a round trip, want %v", l, got[l], want[l])
		}
	}
}

// FuzzRaggedColumns reads the list columns of arbitrary record-batch files and streams as
// ragged arrays: no panic, a clear error or an array that validates, reads every value and
// round-trips through Arrow.
func FuzzRaggedColumns(f *testing.F) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(raggedStream(f))
	for _, pattern := range []string{"arrow-ipc-stream/integration/*/generated_*nested*.stream", "../arrow-js/tensors.arrow*"} {
		files, err := filepath.Glob(filepath.Join(corpusDir, pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, path := range files {
			f.Add(mustRead(f, path))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		schema, recs, err := ReadRecordBatches(b, BatchOptions{Limits: Limits{MaxElements: 1 << 20}})
		if err != nil {
			return
		}
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		for c := range schema.Fields() {
			for _, rec := range recs {
				a, err := arrowtensor.RaggedFromListAny(rec.Column(c))
				if err != nil {
					if !errors.Is(err, arrowtensor.ErrUnsupported) && !errors.Is(err, arrowtensor.ErrNull) && !errors.Is(err, ragged.ErrInvalid) {
						t.Fatalf("column %d: error without a sentinel: %v", c, err)
					}
					continue
				}
				if a.Validate() != nil {
					continue
				}
				readRagged(t, a)
			}
		}
	})
}
