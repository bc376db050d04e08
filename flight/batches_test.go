package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/table"
)

// batchesFixture serves a directory holding t.parquet (userTable, 3000 rows in row groups of
// 400) and returns the server, the file's path and a client.
func batchesFixture(t *testing.T, opts Options) (*testServer, string, *Client) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	writeUserParquet(t, path, 3000, 400)
	s := serve(t, opts, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	return s, path, dial(t, s.uri, ClientOptions{})
}

// localBatches returns table.Batches of the file at path.
func localBatches(t *testing.T, path string, o table.BatchOptions) []table.Batch {
	t.Helper()
	tab, err := table.Open(path, table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	var out []table.Batch
	for b, err := range tab.Batches(t.Context(), o) {
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

// scoreRows returns the table rows a batch's score column says (userTable's score is row/4).
func scoreRows(t *testing.T, v *dataset.Table) []int64 {
	t.Helper()
	score, err := v.Column("score")
	require.NoError(t, err)
	d, err := dataset.DenseOf[float64](score)
	require.NoError(t, err)
	out := make([]int64, 0, score.Rows())
	for _, x := range d.Ravel() {
		out = append(out, int64(x*4))
	}
	return out
}

// TestBatchesOverFlight: the mini-batches of a Parquet table of several row groups served
// from a directory, shuffled and sharded, with columns picked or not, equal table.Batches of
// the file batch for batch — index, cursor (the one in each batch's app_metadata), rows and
// every column — resuming after a cursor from the stream gives the batches that followed, and
// the memory budget is all given back. With a page cache, the same, the columns decoded
// whole (the file's are dictionary-encoded) decoded once.
func TestBatchesOverFlight(t *testing.T) {
	t.Run("no page cache", func(t *testing.T) { testBatchesOverFlight(t, nil) })
	t.Run("page cache", func(t *testing.T) {
		cache, err := dataset.NewPageCache(t.TempDir(), 256<<20)
		if err != nil {
			t.Skipf("no page cache here: %v", err)
		}
		testBatchesOverFlight(t, cache)
		st := cache.Stats()
		assert.Positive(t, st.Pages, "columns kept")
		assert.Greater(t, st.Hits, st.Pages, "and read again")
		require.NoError(t, cache.Close())
	})
}

func testBatchesOverFlight(t *testing.T, cache *dataset.PageCache) {
	s, path, c := batchesFixture(t, Options{MaxMessageBytes: minMessageBytes + messageHeadroom, PageCache: cache})
	held := s.budget.inUse()
	for _, o := range []table.BatchOptions{
		{Size: 64},
		{Size: 100, Shuffle: true, Seed: 42, Epoch: 3, Shard: 1, Shards: 3},
		{Size: 70, Shuffle: true, Seed: 7, Shard: 2, Shards: 3, DropLast: true, Columns: []string{"score", "emb"}},
		{Size: 2500, Shuffle: true, Seed: 1}, // a batch above the message limit: sent in pieces
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			want := localBatches(t, path, o)
			require.NotEmpty(t, want)
			var got []table.Batch
			for b, err := range c.Batches(t.Context(), "t", o) {
				require.NoError(t, err)
				got = append(got, b)
			}
			require.Len(t, got, len(want))
			for i, w := range want {
				g := got[i]
				require.Equal(t, w.Index, g.Index)
				require.Equal(t, w.Cursor, g.Cursor, "batch %d's cursor", i)
				require.Nil(t, g.Rows)
				require.Equal(t, w.Rows, scoreRows(t, g.Values), "batch %d's rows", i)
				require.Equal(t, w.Values.Rows, g.Values.Rows)
				require.Len(t, g.Values.Columns, len(w.Values.Columns))
				for k := range w.Values.Columns {
					requireSameColumn(t, w.Values.Columns[k], g.Values.Columns[k])
				}
			}

			after := got[len(got)/2].Cursor
			r := o
			r.After = &after
			k := len(got)/2 + 1
			for b, err := range c.Batches(t.Context(), "t", r) {
				require.NoError(t, err)
				require.Less(t, k, len(want))
				assert.Equal(t, want[k].Cursor, b.Cursor)
				assert.Equal(t, want[k].Rows, scoreRows(t, b.Values))
				k++
			}
			assert.Equal(t, len(want), k, "resumed: every batch after the cursor")

			fi, err := c.fc.GetFlightInfo(t.Context(), &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: BatchesTicket("t", o)})
			require.NoError(t, err)
			rows := int64(0)
			for _, w := range want {
				rows += int64(len(w.Rows))
			}
			assert.Equal(t, rows, fi.TotalRecords)
			require.Len(t, fi.Endpoint, 1)
			assert.Equal(t, BatchesTicket("t", o), fi.Endpoint[0].Ticket.Ticket)

			// Any client sees a record batch per batch under the message limit, the cursor on
			// the last piece of each.
			stream, err := rawClient(t, s.uri).DoGet(t.Context(), fi.Endpoint[0].Ticket)
			require.NoError(t, err)
			rd, err := arrowflight.NewRecordReader(stream)
			require.NoError(t, err)
			defer rd.Release()
			records, cursors := 0, 0
			for rd.Next() {
				records++
				if len(rd.LatestAppMetadata()) > 0 {
					cursors++
				}
			}
			require.NoError(t, rd.Err())
			assert.Equal(t, len(want), cursors)
			if o.Size == 2500 {
				assert.Greater(t, records, cursors, "a batch above the message limit in pieces")
			} else {
				assert.Equal(t, records, cursors)
			}
		})
	}
	require.Equal(t, held, s.budget.inUse(), "every batch's reservation given back")
}

// TestBatchesByAnyFlightClient: arrow-go's own Flight client, DoGet of the JSON command
// README documents written by hand, reads one stream of the batches, each record batch's
// app_metadata {"cursor": …} the cursor of table.Batches; GetFlightInfo of the command
// describes it.
func TestBatchesByAnyFlightClient(t *testing.T) {
	s, path, _ := batchesFixture(t, Options{})
	raw := rawClient(t, s.uri)
	ctx := context.Background()
	cmd := []byte(`{"batches": {"name": "t", "batch_size": 128, "shuffle": true, "seed": 5, "epoch": 1, "shard": 0, "shards": 2, "columns": ["label", "score"]}}`)
	want := localBatches(t, path, table.BatchOptions{Size: 128, Shuffle: true, Seed: 5, Epoch: 1, Shard: 0, Shards: 2, Columns: []string{"label", "score"}})

	fi, err := raw.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: cmd})
	require.NoError(t, err)
	assert.Equal(t, int64(1500), fi.TotalRecords)
	require.Len(t, fi.Endpoint, 1)
	schema, err := arrowflight.DeserializeSchema(fi.Schema, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"label", "score"}, []string{schema.Field(0).Name, schema.Field(1).Name})

	stream, err := raw.DoGet(ctx, fi.Endpoint[0].Ticket)
	require.NoError(t, err)
	rd, err := arrowflight.NewRecordReader(stream)
	require.NoError(t, err)
	defer rd.Release()
	require.True(t, rd.Schema().Equal(schema))
	i := 0
	for rd.Next() {
		require.Less(t, i, len(want))
		var meta struct{ Cursor string }
		require.NoError(t, json.Unmarshal(rd.LatestAppMetadata(), &meta))
		assert.Equal(t, want[i].Cursor.String(), meta.Cursor, "batch %d", i)
		score := rd.Record().Column(1).(*array.Float64)
		require.Equal(t, len(want[i].Rows), score.Len())
		for k, r := range want[i].Rows {
			require.Equal(t, float64(r)/4, score.Value(k))
		}
		i++
	}
	require.NoError(t, rd.Err())
	assert.Equal(t, len(want), i)
}

// TestBatchesErrors: a command that is not one, options that do not hold and a cursor of
// other options are InvalidArgument (ErrBatches); no such flight NotFound; a cursor of a
// table since changed FailedPrecondition (table.ErrTableChanged); a batch larger than the
// memory budget ResourceExhausted; nothing is held after.
func TestBatchesErrors(t *testing.T) {
	s, path, c := batchesFixture(t, Options{MemoryBudget: 16 << 10})
	raw := rawClient(t, s.uri)
	held := s.budget.inUse()
	code := func(t *testing.T, ticket string) codes.Code {
		stream, err := raw.DoGet(t.Context(), &arrowflight.Ticket{Ticket: []byte(ticket)})
		require.NoError(t, err)
		for {
			if _, err = stream.Recv(); err != nil {
				return status.Code(err)
			}
		}
	}
	for ticket, want := range map[string]codes.Code{
		`{"batches":{"name":"t","batch_size":0}}`:                               codes.InvalidArgument,
		`{"batches":{"name":"t","batch_size":8,"nope":1}}`:                      codes.InvalidArgument,
		`{"batches":{"name":"t","batch_size":8,"shard":3,"shards":2}}`:          codes.InvalidArgument,
		`{"batches":{"name":"t","batch_size":8,"shard":0,"shards":2147483649}}`: codes.InvalidArgument,
		`{"batches":{"name":"t","batch_size":8,"columns":["nope"]}}`:            codes.InvalidArgument,
		`{"batches":{"name":"t","batch_size":8,"after":"c1.x"}}`:                codes.InvalidArgument,
		`{"batches":{"name":"t","batch_size":8}} {}`:                            codes.InvalidArgument,
		`{"batches":{"name":"nope","batch_size":8}}`:                            codes.NotFound,
		`{"batches":{"name":"t","batch_size":100000000}}`:                       codes.ResourceExhausted,
		`{"batches":{"name":"t","batch_size":8,"after":"` + otherCursor + `"}}`: codes.FailedPrecondition,
	} {
		assert.Equal(t, want, code(t, ticket), ticket)
	}

	o := table.BatchOptions{Size: 8}
	_, err := first(c.Batches(t.Context(), "t", table.BatchOptions{}))
	require.ErrorIs(t, err, ErrBatches)
	_, err = first(c.Batches(t.Context(), "nope", o))
	require.ErrorIs(t, err, ErrNotFound)
	b, err := first(c.Batches(t.Context(), "t", o))
	require.NoError(t, err)
	other := table.BatchOptions{Size: 9, After: &b.Cursor}
	_, err = first(c.Batches(t.Context(), "t", other))
	require.ErrorIs(t, err, table.ErrCursor)

	// The file rewritten and reloaded: the cursor is of the table before.
	writeUserParquet(t, path+".new", 900, 150)
	require.NoError(t, os.Rename(path+".new", path))
	_, err = s.store.AddDir(filepath.Dir(path), limits.Limits{})
	require.NoError(t, err)
	o.After = &b.Cursor
	_, err = first(c.Batches(t.Context(), "t", o))
	require.ErrorIs(t, err, table.ErrTableChanged)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	// the streams first left after their first batch end on the server once it sees the
	// cancel: their reservations come back then, not by the time the client has moved on
	require.Eventually(t, func() bool { return s.budget.inUse() == held }, 10*time.Second, time.Millisecond,
		"every reservation given back: %d bytes held, %d before", s.budget.inUse(), held)
}

// otherCursor is a cursor of a table no test serves.
const otherCursor = "c2.0123456789abcdef.0.0.0.8.0.1.0.1"

// first returns the first batch of seq, or its error.
func first(seq func(func(table.Batch, error) bool)) (table.Batch, error) {
	for b, err := range seq {
		return b, err
	}
	return table.Batch{}, fmt.Errorf("no batch")
}

// TestBatchesOfAFileChangedInPlace: a served file modified in place since it was opened fails
// a batches stream with DataLoss naming the file, not the directory it is in, and gives the
// memory budget back.
func TestBatchesOfAFileChangedInPlace(t *testing.T) {
	s, path, c := batchesFixture(t, Options{})
	held := s.budget.inUse()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(make([]byte, 4096))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	n := 0
	var last error
	for _, err := range c.Batches(t.Context(), "t", table.BatchOptions{Size: 500, Shuffle: true, Seed: 3}) {
		n++
		last = err
	}
	require.Error(t, last)
	assert.Equal(t, codes.DataLoss, status.Code(last), "%v", last)
	assert.Contains(t, last.Error(), "t.parquet")
	assert.NotContains(t, last.Error(), filepath.Dir(path))
	require.Equal(t, held, s.budget.inUse())
}

// TestBatchesAfterTheLastBatch: the cursor of an epoch's last batch is answered as
// table.Batches answers it — no batch, no error: a stream of the schema alone, GetFlightInfo's
// total_records 0 — for the Go client and any Flight client alike.
func TestBatchesAfterTheLastBatch(t *testing.T) {
	s, path, c := batchesFixture(t, Options{})
	o := table.BatchOptions{Size: 400, Shuffle: true, Seed: 3, Epoch: 2, Shard: 1, Shards: 2, Columns: []string{"label", "score"}}
	want := localBatches(t, path, o)
	require.Len(t, want, 4, "1500 rows in batches of 400")
	o.After = &want[len(want)-1].Cursor
	for b, err := range c.Batches(t.Context(), "t", o) {
		t.Fatalf("a batch after the last: %+v, %v", b, err)
	}

	ticket := BatchesTicket("t", o)
	raw := rawClient(t, s.uri)
	fi, err := raw.GetFlightInfo(t.Context(), &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: ticket})
	require.NoError(t, err)
	assert.Zero(t, fi.TotalRecords)
	stream, err := raw.DoGet(t.Context(), &arrowflight.Ticket{Ticket: ticket})
	require.NoError(t, err)
	rd, err := arrowflight.NewRecordReader(stream)
	require.NoError(t, err, "a stream with a schema")
	defer rd.Release()
	require.Equal(t, []string{"label", "score"}, []string{rd.Schema().Field(0).Name, rd.Schema().Field(1).Name})
	assert.False(t, rd.Next(), "and no record batch")
	require.NoError(t, rd.Err())
}
