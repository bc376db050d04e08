package flight

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/table"
)

// rest is what a refusal of a table some of whose files can be read says to do.
const rest = "serve --skip-unreadable serves the rest"

// servedPartRows is the rows of each part writeServedParts writes.
const servedPartRows = 100

// writeServedParts writes n parts of the user table into dir/train (part-I.parquet: the rows
// [100·I, 100·I+100), whose score is the row over 4) and returns their paths.
func writeServedParts(t *testing.T, dir string, n int) []string {
	var paths []string
	for i := range n {
		path := filepath.Join(dir, "train", fmt.Sprintf("part-%d.parquet", i))
		writeUserParquetFrom(t, path, servedPartRows*i, servedPartRows, 50)
		paths = append(paths, path)
	}
	return paths
}

// scoresOf returns the rows (score × 4) of the table flight train as a client gets it whole.
func scoresOf(t *testing.T, c *Client) []int64 {
	cols, err := c.GetTable(context.Background(), "train")
	require.NoError(t, err)
	for _, col := range cols {
		if col.Column == "score" {
			scores, err := dataset.DenseOf[float64](col)
			require.NoError(t, err)
			out := make([]int64, 0, scores.Shape()[0])
			for _, s := range scores.Ravel() {
				out = append(out, int64(s*4))
			}
			return out
		}
	}
	t.Fatal("no score column")
	return nil
}

// rowsOfParts returns the rows writeServedParts writes into the parts numbered parts.
func rowsOfParts(parts ...int) []int64 {
	var out []int64
	for _, i := range parts {
		for r := range servedPartRows {
			out = append(out, int64(servedPartRows*i+r))
		}
	}
	return out
}

// cutShort truncates the file at path in place to half its size: a Parquet file without its
// footer.
func cutShort(t *testing.T, path string) {
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, info.Size()/2))
}

// requireRefused checks that every way a client asks for the flight name — its FlightInfo,
// its stream, rows, mini-batches — fails with FailedPrecondition naming the part under the
// served directory (ErrUnreadable on the client) and what to do, todo, and never the
// server's path.
func requireRefused(t *testing.T, c *Client, dir, name, part, todo string) {
	t.Helper()
	ctx := context.Background()
	_, infoErr := c.Info(ctx, name)
	_, getErr := c.GetTable(ctx, name)
	_, takeErr := c.Take(ctx, name, []int64{0, 1}, nil)
	var batchErr error
	for _, err := range c.Batches(ctx, name, table.BatchOptions{Size: 10}) {
		batchErr = err
		break
	}
	for what, err := range map[string]error{"info": infoErr, "get": getErr, "take": takeErr, "batches": batchErr} {
		require.ErrorIs(t, err, ErrUnreadable, "%s %s", what, name)
		assert.Equal(t, codes.FailedPrecondition, status.Code(err), "%s %s", what, name)
		assert.Contains(t, err.Error(), "unreadable part "+part+": ", "%s %s", what, name)
		assert.True(t, strings.HasSuffix(err.Error(), ": "+todo), "%s %s: %v", what, name, err)
		assert.NotContains(t, err.Error(), dir, "%s %s: the server's path stays on the server", what, name)
	}
}

// TestServedTableWithAnUnreadablePart: a served table one of whose parts cannot be read (a
// Parquet file without its footer) is never served smaller: every call for it or its columns
// fails naming the part, the listing names it with no rows, the server's problems name it by
// its full path; the directory's other tensors are served. With SetSkipUnreadable the table is
// served from the other parts, the part named in each of its flights' app_metadata.
func TestServedTableWithAnUnreadablePart(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip=%v", skip), func(t *testing.T) {
			dir := t.TempDir()
			paths := writeServedParts(t, dir, 4)
			cutShort(t, paths[2])
			require.NoError(t, dataset.Save(filepath.Join(dir, "other.npy"), []dataset.Tensor{{Dense: ndarray.New[int64](3)}}, dataset.WriteOptions{}))
			s := serve(t, Options{}, "grpc")
			s.store.SetSkipUnreadable(skip)
			_, err := s.store.AddDir(dir, limits.Limits{})
			require.ErrorIs(t, err, dataset.ErrUnreadable)
			require.ErrorContains(t, err, paths[2]+": ", "the server's problems name the file whole")
			c := dial(t, s.uri, ClientOptions{})
			ctx := context.Background()
			_, err = c.Get(ctx, "other")
			require.NoError(t, err, "another table is served")

			infos, err := c.List(ctx)
			require.NoError(t, err)
			listed := map[string]Info{}
			for _, i := range infos {
				listed[i.Name] = i
			}
			for _, name := range []string{"train", "train.label", "train.emb"} {
				require.Contains(t, listed, name)
			}
			part := "train/part-2.parquet"
			if !skip {
				for _, name := range []string{"train", "train.label", "train.emb"} {
					require.Len(t, listed[name].Unreadable, 1, name)
					assert.Contains(t, listed[name].Unreadable[0], part+": ", name)
					assert.Equal(t, int64(-1), listed[name].Rows, "%s: not served, so no rows", name)
					assert.Empty(t, listed[name].Skipped, name)
					requireRefused(t, c, dir, name, part, rest)
				}
				assert.Empty(t, listed["other"].Unreadable)
				return
			}
			for _, name := range []string{"train", "train.label", "train.emb"} {
				require.Len(t, listed[name].Skipped, 1, name)
				assert.Contains(t, listed[name].Skipped[0], part+": ", name)
				assert.NotContains(t, listed[name].Skipped[0], dir, name)
				assert.Equal(t, int64(3*servedPartRows), listed[name].Rows, "%s: the rows of the parts read", name)
				info, err := c.Info(ctx, name)
				require.NoError(t, err)
				assert.Equal(t, listed[name].Skipped, info.Skipped, "%s: GetFlightInfo names it too", name)
			}
			assert.Equal(t, rowsOfParts(0, 1, 3), scoresOf(t, c))
			got, err := c.Take(ctx, "train", []int64{299, 0, 200}, []string{"score"})
			require.NoError(t, err)
			scores, err := dataset.DenseOf[float64](got[0])
			require.NoError(t, err)
			assert.Equal(t, []float64{399.0 / 4, 0, 300.0 / 4}, scores.Ravel(), "row 200 is part-3's first")
		})
	}
}

// TestRescanFindsAPartUnreadable: a part truncated in place under a running server takes its
// table out of service at the next Rescan (or, with SetSkipUnreadable, leaves it served
// without the part, named), and the part written whole again brings the table back whole;
// a part removed is a smaller table, served, under another version.
func TestRescanFindsAPartUnreadable(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip=%v", skip), func(t *testing.T) {
			dir := t.TempDir()
			paths := writeServedParts(t, dir, 4)
			s := serve(t, Options{}, "grpc")
			s.store.SetSkipUnreadable(skip)
			_, err := s.store.AddDir(dir, limits.Limits{})
			require.NoError(t, err)
			c := dial(t, s.uri, ClientOptions{})
			ctx := context.Background()
			assert.Equal(t, rowsOfParts(0, 1, 2, 3), scoresOf(t, c))
			whole, err := c.Info(ctx, "train")
			require.NoError(t, err)

			cutShort(t, paths[1])
			changes, err := s.store.Rescan()
			require.ErrorIs(t, err, dataset.ErrUnreadable)
			require.ErrorContains(t, err, paths[1]+": ")
			assert.Contains(t, changes.Changed, "train")
			if skip {
				info, err := c.Info(ctx, "train")
				require.NoError(t, err)
				require.Len(t, info.Skipped, 1)
				assert.Contains(t, info.Skipped[0], "train/part-1.parquet: ")
				assert.Equal(t, int64(3*servedPartRows), info.Rows)
				assert.NotEqual(t, whole.Version, info.Version)
				assert.Equal(t, rowsOfParts(0, 2, 3), scoresOf(t, c))
			} else {
				requireRefused(t, c, dir, "train", "train/part-1.parquet", rest)
				requireRefused(t, c, dir, "train.score", "train/part-1.parquet", rest)
			}

			writeUserParquetFrom(t, paths[1], servedPartRows, servedPartRows, 50) // whole again
			_, err = s.store.Rescan()
			require.NoError(t, err)
			info, err := c.Info(ctx, "train")
			require.NoError(t, err)
			assert.Empty(t, info.Skipped)
			assert.Empty(t, info.Unreadable)
			assert.Equal(t, rowsOfParts(0, 1, 2, 3), scoresOf(t, c))

			require.NoError(t, os.Remove(paths[3]))
			_, err = s.store.Rescan()
			require.NoError(t, err, "a part removed is no unreadable part")
			smaller, err := c.Info(ctx, "train")
			require.NoError(t, err)
			assert.Empty(t, smaller.Skipped)
			assert.Equal(t, int64(3*servedPartRows), smaller.Rows)
			assert.NotEqual(t, info.Version, smaller.Version, "another version")
			assert.Equal(t, rowsOfParts(0, 1, 2), scoresOf(t, c))
		})
	}
}

// TestTableOfNoReadableFileIsListed: a table none of whose files can be read — a file of its
// own cut short, two files of one base name — is listed by its name with its files, and a
// client asking for it, or for a tensor of it, is told why.
func TestTableOfNoReadableFileIsListed(t *testing.T) {
	dir := t.TempDir()
	writeUserParquet(t, filepath.Join(dir, "lone.parquet"), 100, 50)
	cutShort(t, filepath.Join(dir, "lone.parquet"))
	labels := []dataset.Tensor{{Name: "label", Column: "label", Dense: ndarray.New[int64](1000)}}
	for _, name := range []string{"t.parquet", "t.arrow"} {
		require.NoError(t, dataset.Save(filepath.Join(dir, name), labels, dataset.WriteOptions{}))
	}
	s := serve(t, Options{}, "grpc")
	_, added := s.store.AddDir(dir, limits.Limits{})
	require.ErrorIs(t, added, dataset.ErrUnreadable)
	c := dial(t, s.uri, ClientOptions{})
	infos, err := c.List(context.Background())
	require.NoError(t, err)
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
		assert.Equal(t, KindTable, i.Kind, i.Name)
		assert.Equal(t, int64(-1), i.Rows, i.Name)
		require.NotEmpty(t, i.Unreadable, i.Name)
	}
	assert.Equal(t, []string{"lone", "t"}, names)
	assert.Len(t, infos[1].Unreadable, 2, "t.arrow and t.parquet")
	requireRefused(t, c, dir, "lone.label", "lone.parquet", "no file of it can be read") // no rest to serve
	requireRefused(t, c, dir, "t", "t.arrow", "no file of it can be read")
	assert.Contains(t, added.Error(), "t.arrow: t.parquet beside it: files whose names differ only in their extension: neither is read (rename or move one): the table t is not served: no file of it can be read")
	assert.NotContains(t, added.Error(), "serves the rest", "there is no rest: %v", added)
	assert.True(t, slices.ContainsFunc(infos[1].Unreadable, func(s string) bool { return strings.HasPrefix(s, "t.parquet: t.arrow beside it") }))
}

// TestRescanNamesTheFilesGone: a Rescan after a part of a served table is removed names the
// part in Changes.Gone (the table is served smaller: never in silence), and the table as
// changed; a part replaced by a rename, or cut short (an unreadable part, which the Rescan's
// error names), is not gone.
func TestRescanNamesTheFilesGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, paths []string)
		gone   []int // the parts gone
	}{
		{"a part removed", func(t *testing.T, paths []string) { require.NoError(t, os.Remove(paths[1])) }, []int{1}},
		{"two parts removed", func(t *testing.T, paths []string) {
			require.NoError(t, os.Remove(paths[0]))
			require.NoError(t, os.Remove(paths[2]))
		}, []int{0, 2}},
		{"a part renamed away", func(t *testing.T, paths []string) {
			require.NoError(t, os.Rename(paths[2], filepath.Join(filepath.Dir(paths[2]), ".hidden")))
		}, []int{2}},
		{"a part replaced by a rename", func(t *testing.T, paths []string) {
			tmp := filepath.Join(t.TempDir(), "p.parquet")
			writeUserParquetFrom(t, tmp, 0, servedPartRows, 50)
			require.NoError(t, os.Rename(tmp, paths[1]))
		}, nil},
		{"a part cut short", func(t *testing.T, paths []string) { cutShort(t, paths[1]) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths := writeServedParts(t, dir, 3)
			s := serve(t, Options{}, "grpc")
			s.store.SetSkipUnreadable(true)
			_, err := s.store.AddDir(dir, limits.Limits{})
			require.NoError(t, err)
			tc.change(t, paths)
			changes, _ := s.store.Rescan()
			var want []string
			for _, i := range tc.gone {
				want = append(want, paths[i])
			}
			assert.Equal(t, want, changes.Gone)
			assert.Contains(t, changes.Changed, "train", "served anew")
		})
	}
}
