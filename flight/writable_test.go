package flight

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestReadOnlyUnlessWritable: a server refuses every upload and delete — Put, PutTable, PutAll
// (whose commit it does not list), Delete, a raw DoPut, the commit and abort actions — with
// PermissionDenied saying which option enables them (ErrReadOnly in Go), and holds what it
// held; Options.Writable takes them. A token is checked first: a call without it is
// Unauthenticated, on either.
func TestReadOnlyUnlessWritable(t *testing.T) {
	ctx := context.Background()
	x := dataset.Tensor{Dense: ndarray.New[int32](4, 2)}
	col := func(name string) dataset.Tensor {
		return dataset.Tensor{Column: name, Dense: ndarray.New[float32](4)}
	}
	for _, tc := range []struct {
		name     string
		writable bool
		actions  []string // what ListActions lists
	}{
		{"read-only by default", false, []string{ActionList, ActionReload, ActionStatus}},
		{"writable", true, []string{ActionList, ActionDelete, ActionReload, ActionCommit, ActionAbort, ActionStatus}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, Options{Writable: tc.writable, Token: "s3cret"}, "grpc")
			require.NoError(t, s.store.Add("served", x))
			c := dial(t, s.uri, ClientOptions{Token: "s3cret"})
			raw := rawClient(t, s.uri)
			authorized := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
			action := func(typ, body string) error {
				stream, err := raw.DoAction(authorized, &arrowflight.Action{Type: typ, Body: []byte(body)})
				if err != nil {
					return err
				}
				return collect(stream.Recv)
			}
			writes := []struct {
				name  string
				write func() error
				wrote []string // the names the store holds after, when writable
			}{
				{"Put", func() error { return c.Put(ctx, "up", x) }, []string{"served", "up"}},
				{"PutTable", func() error { return c.PutTable(ctx, "tab", []dataset.Tensor{col("a"), col("b")}) }, []string{"served", "tab", "tab.a", "tab.b", "up"}},
				{"PutAll", func() error { return c.PutAll(ctx, []string{"p", "q"}, []dataset.Tensor{x, x}) }, []string{"p", "q", "served", "tab", "tab.a", "tab.b", "up"}},
				{"Delete", func() error { return c.Delete(ctx, "up") }, []string{"p", "q", "served", "tab", "tab.a", "tab.b"}},
				{"DoPut", func() error {
					stream, err := raw.DoPut(authorized)
					if err != nil {
						return err
					}
					_ = stream.Send(&arrowflight.FlightData{FlightDescriptor: pathDescriptor("raw")})
					_ = stream.CloseSend()
					return collect(stream.Recv)
				}, nil}, // a descriptor and no schema: InvalidArgument when writable
				{"commit", func() error { return action(ActionCommit, "no-such-tx") }, nil},
				{"abort", func() error { return action(ActionAbort, "no-such-tx") }, nil},
			}
			for _, w := range writes {
				err := w.write()
				if !tc.writable {
					require.ErrorIs(t, fromRemote("", err), ErrReadOnly, w.name)
					assert.Equal(t, codes.PermissionDenied, status.Code(err), w.name)
					assert.ErrorContains(t, err, "flight: the server is read-only: ", w.name)
					assert.ErrorContains(t, err, "is refused; serve --writable (flight.Options.Writable) takes uploads and deletes", w.name)
					assert.Equal(t, []string{"served"}, s.store.Names(), "%s: the store is as it was", w.name)
					continue
				}
				assert.NotErrorIs(t, fromRemote("", err), ErrReadOnly, w.name)
				if w.wrote == nil {
					assert.Contains(t, []codes.Code{codes.InvalidArgument, codes.NotFound}, status.Code(err), "%s: %v", w.name, err)
					continue
				}
				require.NoError(t, err, w.name)
				assert.Equal(t, w.wrote, slices.Sorted(slices.Values(s.store.Names())), w.name)
			}

			stream, err := raw.ListActions(authorized, &arrowflight.Empty{})
			require.NoError(t, err)
			var listed []string
			for {
				a, err := stream.Recv()
				if err != nil {
					break
				}
				listed = append(listed, a.GetType())
			}
			assert.Equal(t, tc.actions, listed)

			anonymous := dial(t, s.uri, ClientOptions{})
			require.ErrorIs(t, anonymous.Put(ctx, "up2", x), ErrUnauthenticated, "the token before anything")
			require.ErrorIs(t, anonymous.Delete(ctx, "served"), ErrUnauthenticated)
		})
	}
}

// TestWritableWithoutTokenWarns: a Writable server without a token logs, as it starts, that
// any client that reaches it can write; one with a token, or read-only, says nothing of it.
func TestWritableWithoutTokenWarns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		warns bool
	}{
		{"writable without a token", Options{Writable: true}, true},
		{"writable with a token", Options{Writable: true, Token: "t"}, false},
		{"read-only without a token", Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncBuffer{}
			tc.opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
			s := serve(t, tc.opts, "grpc")
			_, err := dial(t, s.uri, ClientOptions{Token: tc.opts.Token}).List(context.Background())
			require.NoError(t, err) // Serve has started
			const warning = "flight: the server takes uploads and deletes (serve --writable) from any client that reaches it: it has no token (serve --token, $NDARROW_TOKEN)"
			if tc.warns {
				assert.Contains(t, logs.String(), "level=WARN msg=\""+warning)
			} else {
				assert.NotContains(t, logs.String(), "uploads and deletes")
			}
		})
	}
}
