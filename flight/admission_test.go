package flight

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestConcurrentUploadsWithinTheBudget reproduces four concurrent uploads, each within
// MaxPutBytes and within the memory budget alone but not together, against a server in a
// child process whose address space holds the budget and the uploads once but not the 2.2
// times each a server used to hold: every upload is stored whole or refused with
// ResourceExhausted naming the budget, the server never holds more than the budget, serves
// another client throughout, and takes an upload again once the stored ones are deleted.
func TestConcurrentUploadsWithinTheBudget(t *testing.T) {
	childtest.Run(t, "TestConcurrentUploadsWithinTheBudgetChild", 1400<<20)
}

// TestConcurrentUploadsWithinTheBudgetChild is the child side of
// TestConcurrentUploadsWithinTheBudget.
func TestConcurrentUploadsWithinTheBudgetChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("the body of TestConcurrentUploadsWithinTheBudget, run only as its child process")
	}
	// Under the race detector, which bounds no address space and slows every byte, a quarter
	// of the sizes.
	scale := map[bool]int64{false: 1, true: 4}[childtest.RaceEnabled]
	budget := 256 << 20 / scale
	// As serve sets it: the collector runs as the heap nears what the budgets bound, not at
	// twice the live heap, which under a loaded machine's late collections can pass the
	// child's address space (the runtime's "out of memory", seen in CI) with nothing held
	// beyond the budget.
	debug.SetMemoryLimit(budget + DefaultWireBudget(budget) + 256<<20)
	s := serve(t, Options{Writable: true, MemoryBudget: budget, BudgetWait: 2 * time.Second}, "grpc")
	keep := randomDense[float64](mrand.New(mrand.NewPCG(1, 2)), 64, 64)
	require.NoError(t, s.store.Add("keep", dataset.Tensor{Dense: keep}))
	// 192 MiB: within the budget alone, not twice.
	up := randomDense[float32](mrand.New(mrand.NewPCG(3, 4)), 48<<10/scale, 1<<10)
	c := dial(t, s.uri, ClientOptions{})

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Put(context.Background(), fmt.Sprintf("up%d", i), dataset.Tensor{Dense: up})
		}()
	}
	// Another client is served meanwhile.
	got, err := GetDense[float64](context.Background(), dial(t, s.uri, ClientOptions{}), "keep")
	require.NoError(t, err)
	assert.Equal(t, keep.Data(), got.Data())
	wg.Wait()

	stored := 0
	for i, err := range errs {
		if err == nil {
			stored++
			back, err := GetDense[float32](context.Background(), c, fmt.Sprintf("up%d", i))
			require.NoError(t, err)
			assert.True(t, sameBits(back, up), "up%d is stored whole", i)
			continue
		}
		assert.Equal(t, codes.ResourceExhausted, status.Code(err), "up%d: %v", i, err)
		assert.ErrorContains(t, err, "memory budget")
		assert.ErrorContains(t, err, "--memory-budget")
	}
	t.Logf("child: %d of 4 uploads stored, the memory budget peaked at %d MiB of %d", stored, s.budget.peak.Load()>>20, budget>>20)
	assert.Equal(t, 1, stored, "the eldest upload goes on, the others give way: two do not fit")
	assert.LessOrEqual(t, s.budget.peak.Load(), budget)

	// Deleted, the stored uploads give their memory back, and an upload fits again.
	for i := range errs {
		_ = c.Delete(context.Background(), fmt.Sprintf("up%d", i))
	}
	require.Zero(t, s.budget.inUse(), "nothing is held once the uploads are deleted")
	require.NoError(t, c.Put(context.Background(), "again", dataset.Tensor{Dense: up}))
	back, err := GetDense[float32](context.Background(), c, "again")
	require.NoError(t, err)
	assert.True(t, sameBits(back, up))
	// Held once: the result grows in place (mmap.Region), not by copies.
	assert.Less(t, s.budget.inUse(), int64(up.Size()*4)+1<<20, "the stored upload is held once")
	require.NoError(t, c.Delete(context.Background(), "again"))

	// A flood of uploads under distinct names, one after the other (2.3 GiB in all, more than
	// the child's address space): what is stored counts until deleted, so those past the
	// budget are refused and the server lives.
	half, err := up.Slice(ndarray.Range(0, 24<<10/scale)) // 96 MiB
	require.NoError(t, err)
	stored = 0
	for i := range 24 {
		switch err := c.Put(context.Background(), fmt.Sprintf("flood%d", i), dataset.Tensor{Dense: half}); {
		case err == nil:
			stored++
		default:
			require.Equal(t, codes.ResourceExhausted, status.Code(err), "flood%d: %v", i, err)
		}
	}
	t.Logf("child: %d of 24 uploads of %d MiB stored under a budget of %d MiB", stored, half.Size()*4>>20, budget>>20)
	assert.Equal(t, 2, stored)
	got, err = GetDense[float64](context.Background(), dial(t, s.uri, ClientOptions{}), "keep")
	require.NoError(t, err)
	assert.Equal(t, keep.Data(), got.Data(), "and serves its tensors")
}

// TestStoredUploadsCountUntilDeleted reproduces uploads under distinct names, one after the
// other: what is stored counts against the budget until it is deleted, so the upload that
// does not fit is refused (nothing is evicted), with a message that says so, and the server
// goes on; deleting makes room. Uploads of nothing count too (entryOverhead), and staged
// transactions are bounded in number.
func TestStoredUploadsCountUntilDeleted(t *testing.T) {
	const budget = 16 << 20
	s := serve(t, Options{Writable: true, MemoryBudget: budget, WireBudget: 512 << 20, BudgetWait: 50 * time.Millisecond}, "grpc")
	c := dial(t, s.uri, ClientOptions{})
	x := randomDense[float32](mrand.New(mrand.NewPCG(5, 6)), 1<<10, 1<<10) // 4 MiB
	var stored []string
	var refused error
	for i := range 10 {
		name := fmt.Sprintf("x%d", i)
		if err := c.Put(context.Background(), name, dataset.Tensor{Dense: x}); err != nil {
			refused = err
			break
		}
		stored = append(stored, name)
	}
	require.Error(t, refused, "16 MiB does not hold ten 4 MiB uploads")
	assert.Equal(t, codes.ResourceExhausted, status.Code(refused), "%v", refused)
	assert.ErrorContains(t, refused, "memory budget of 16777216 bytes")
	assert.Len(t, stored, 3, "three are stored (the fourth leaves no room for its last rows)")
	for _, name := range stored {
		got, err := GetDense[float32](context.Background(), c, name)
		require.NoError(t, err)
		assert.True(t, sameBits(got, x), "%s is kept whole: nothing was evicted", name)
	}
	require.NoError(t, c.Delete(context.Background(), stored[0]))
	require.NoError(t, c.Put(context.Background(), "after", dataset.Tensor{Dense: x}), "deleting made room")

	// Staged transactions: each staged upload counts entryOverhead at least, and their
	// number is bounded.
	raw := rawClient(t, s.uri)
	empty := streamOf(t, dataset.Tensor{Dense: randomDense[int8](mrand.New(mrand.NewPCG(7, 8)), 0, 3)})
	staged := func(tx, name string) error {
		fds := flightData(empty, name)
		cmd, _ := json.Marshal(stageRequest{Tx: tx, Name: name})
		fds[0].FlightDescriptor = &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: append([]byte(stageCommand), cmd...)}
		return put(t, raw, fds)
	}
	before := s.budget.inUse()
	require.NoError(t, staged("t0", "a"))
	require.NoError(t, staged("t0", "b"))
	assert.Equal(t, before+2*entryOverhead, s.budget.inUse(), "a staged upload of nothing counts")
	var err error
	for i := 0; err == nil && i < maxTransactions+1; i++ {
		err = staged(fmt.Sprintf("tx%d", i), "a")
	}
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	s.staged.mu.Lock()
	open := len(s.staged.txs)
	s.staged.mu.Unlock()
	assert.LessOrEqual(t, open, maxTransactions)
}

// TestOversizedMessagesAreRefused: a message over MaxRecvMessageBytes is refused by gRPC
// before it is read — an upload's with what to do about it, a unary call's request too — and
// the wire budget is whole again afterwards.
func TestOversizedMessagesAreRefused(t *testing.T) {
	s := serve(t, Options{Writable: true, MaxRecvMessageBytes: 1 << 20}, "grpc")
	raw := rawClient(t, s.uri)
	big := randomDense[uint8](mrand.New(mrand.NewPCG(9, 10)), 2<<10, 1<<10)
	fds := flightData(streamOf(t, dataset.Tensor{Dense: big}), "big")
	err := put(t, raw, fds)
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.ErrorContains(t, err, "larger than max")

	_, err = raw.GetFlightInfo(context.Background(), pathDescriptor(strings.Repeat("x", 2<<20)))
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)

	// ndarrow's own client sends batches under its message limit: the same tensor goes.
	c := dial(t, s.uri, ClientOptions{MaxMessageBytes: 1 << 19})
	require.NoError(t, c.Put(context.Background(), "big", dataset.Tensor{Dense: big}))
	c.Close()
	raw.Close()
	require.Eventually(t, func() bool { return s.wire.inUse() == 0 }, 10*time.Second, 10*time.Millisecond,
		"every connection's and call's share of the wire budget is given back")
}

// TestStalledReadersAreCut reproduces clients that start streams of a Parquet column and stop
// reading, by DoGet and by the data URL, while the memory budget holds two row groups'
// decoding: each stalled stream is cut after StallTimeout, what it held is given back, and a
// client that reads gets every value (it used to wait for the budget and fail).
func TestStalledReadersAreCut(t *testing.T) {
	dir := t.TempDir()
	const rows = 600_000
	writeParquet(t, filepath.Join(dir, "table.parquet"), 0, rows, 2<<20)
	s := serve(t, Options{StallTimeout: 300 * time.Millisecond, BudgetWait: time.Minute}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	e, err := s.store.get("table.emb")
	require.NoError(t, err)
	costs := e.source.DecodeBytes()
	e.release()
	require.Greater(t, len(costs), 4, "several row groups")
	s.budget.size = 2 * costs[0] // two row groups at once

	// A DoGet client with a small window that never reads.
	conn, err := grpc.NewClient(s.uri[len("grpc://"):], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	require.NoError(t, err)
	defer conn.Close()
	stalled := arrowflight.NewClientFromConn(conn, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := stalled.DoGet(ctx, &arrowflight.Ticket{Ticket: []byte("table.emb")})
	require.NoError(t, err)

	// A data-URL client that reads the response's head and stops.
	c := dial(t, s.uri, ClientOptions{})
	info, err := c.fc.GetFlightInfo(context.Background(), pathDescriptor("table.emb"))
	require.NoError(t, err)
	url := info.Endpoint[0].Location[1].Uri
	hc, err := net.Dial("tcp", s.uri[len("grpc://"):])
	require.NoError(t, err)
	defer hc.Close()
	fmt.Fprintf(hc, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", url[strings.Index(url, "/arrow-flight"):])
	resp, err := http.ReadResponse(bufio.NewReader(hc), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A client that reads is served whole, within the budget.
	got, err := GetDense[float32](context.Background(), c, "table.emb")
	require.NoError(t, err)
	require.Equal(t, int64(rows), got.Dim(0))
	assert.Equal(t, float32(rows*8-1), got.Data()[len(got.Data())-1])

	// The stalled ones were cut: the DoGet with DeadlineExceeded, the data URL's connection
	// closed; nothing is held.
	for {
		if _, err = stream.Recv(); err != nil {
			break
		}
	}
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	_, err = io.Copy(io.Discard, resp.Body)
	assert.Error(t, err, "the data URL's response is cut, without its end")
	require.Eventually(t, func() bool { return s.budget.inUse() == 0 }, 10*time.Second, 10*time.Millisecond)
}

// TestIdleConnectionsAreClosed reproduces connections that send HTTP/2's preface and settings,
// then nothing: each is closed after IdleTimeout, connections past MaxConnections are closed at
// once, the server serves a real client throughout, and the wire budget is whole again after.
func TestIdleConnectionsAreClosed(t *testing.T) {
	const maxConns = 8
	s := serve(t, Options{IdleTimeout: 300 * time.Millisecond, MaxConnections: maxConns}, "grpc")
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: randomDense[int32](mrand.New(mrand.NewPCG(1, 1)), 4, 4)}))
	addr := s.uri[len("grpc://"):]
	idle := func() net.Conn {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"))
		require.NoError(t, err)
		return conn
	}
	var conns []net.Conn
	for range maxConns - 1 {
		conns = append(conns, idle())
	}
	// closed waits for the server to close conn (an end of file, or a reset for the bytes it
	// did not read), and fails when it does not within 30 s.
	closed := func(conn net.Conn) error {
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := io.Copy(io.Discard, conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return err
		}
		return nil
	}
	// One place is left, for a real client (another idle one is refused meanwhile).
	c := dial(t, s.uri, ClientOptions{GRPCOnly: true})
	_, err := c.Get(context.Background(), "x")
	require.NoError(t, err)
	extra := idle()
	require.NoError(t, closed(extra), "a connection past MaxConnections is closed at once")

	for i, conn := range conns {
		require.NoError(t, closed(conn), "idle connection %d is closed", i)
		conn.Close()
	}
	c.Close()
	require.Eventually(t, func() bool { return s.wire.inUse() == 0 }, 10*time.Second, 10*time.Millisecond)
}

// TestWireBudget: a call that finds no room in the wire budget is refused with
// ResourceExhausted naming it; a request waits its turn while another message arrives.
func TestWireBudget(t *testing.T) {
	s := serve(t, Options{}, "grpc")
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: randomDense[int32](mrand.New(mrand.NewPCG(1, 1)), 4, 4)}))
	c := dial(t, s.uri, ClientOptions{GRPCOnly: true})
	_, err := c.Get(context.Background(), "x") // connected
	require.NoError(t, err)

	// All but less than a call's window taken: a call is refused at once.
	free := s.wire.size - s.wire.inUse()
	require.True(t, s.wire.tryReserve(free-serverStreamWindow+1))
	_, err = c.fc.GetSchema(context.Background(), pathDescriptor("x"))
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.ErrorContains(t, err, "wire budget")
	s.wire.release(free - serverStreamWindow + 1)

	// Room for calls but not for a request: a unary call waits for it.
	held := s.wire.size - s.wire.inUse() - 4*serverStreamWindow
	require.True(t, s.wire.tryReserve(held))
	done := make(chan error, 1)
	go func() {
		_, err := c.fc.GetFlightInfo(context.Background(), pathDescriptor("x"))
		done <- err
	}()
	require.Eventually(t, func() bool { return s.wire.waits.Load() > 0 }, 10*time.Second, time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("answered while its request had no room: %v", err)
	default:
	}
	s.wire.release(held)
	require.NoError(t, <-done)
}

// TestStreamFaultsUnderAMemoryLimit runs TestStreamFaultsChild in a child process whose address
// space is limited.
func TestStreamFaultsUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestStreamFaultsChild", 1<<30)
}

// TestStreamFaultsChild runs, under the child's memory limit, the tests of a file rewritten in
// place and then replaced or removed under a stream (DoGet, data URLs), of readers that stop
// reading (a DoGet and a data URL) and of connections that never call: each ends in its clear
// error, and the server in the child neither dies nor outgrows the limit.
func TestStreamFaultsChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestStreamFaultsUnderAMemoryLimit")
	}
	t.Run("one version a stream", TestAStreamSendsOneVersion)
	t.Run("stalled readers", TestStalledReadersAreCut)
	t.Run("idle connections", TestIdleConnectionsAreClosed)
}

// TestStagesOfOneTransactionAreBounded: a transaction takes maxStagesPerTx uploads and no more
// (a new name past them is ErrExceeded, naming the transaction); an upload again under a name
// it holds replaces that one, and other transactions go on.
func TestStagesOfOneTransactionAreBounded(t *testing.T) {
	st := &staging{budget: 1 << 40}
	entry := func() *entry { e := &entry{bytes: 1}; e.refs.Add(1); return e }
	for i := range maxStagesPerTx {
		require.NoError(t, st.add("tx", fmt.Sprintf("n%d", i), entry()))
	}
	err := st.add("tx", "one more", entry())
	require.ErrorIs(t, err, limits.ErrExceeded)
	assert.ErrorContains(t, err, `transaction "tx" stages 4096 uploads, the most one may`)
	require.NoError(t, st.add("tx", "n7", entry()), "a name it holds is replaced")
	require.NoError(t, st.add("other", "a", entry()))
	assert.Equal(t, int64(maxStagesPerTx+1), st.bytes)
}

// TestWireBudgetBelowOneCall: a wire budget that cannot hold one call receiving a message and
// sending two beside the headroom it keeps for requests is refused by NewServer, naming the
// smallest that can; that smallest is taken.
func TestWireBudgetBelowOneCall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		recv, msg int
	}{
		{"the defaults", Options{}, DefaultServerRecvMessageBytes, DefaultMaxMessageBytes},
		{"large messages sent", Options{MaxRecvMessageBytes: 64 << 10, MaxMessageBytes: 16 << 20}, 64 << 10, 16 << 20},
		{"uploads bounded", Options{MaxPutBytes: 1 << 20}, 1<<20 + messageHeadroom, DefaultMaxMessageBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			need := minWireBudget(tc.recv, tc.msg)
			opts := tc.opts
			opts.MemoryBudget, opts.WireBudget = 1<<30, need-1
			_, err := NewServer(NewStore(nil), opts)
			require.Error(t, err)
			assert.ErrorContains(t, err, fmt.Sprintf("flight: a wire budget of %d bytes (serve --wire-budget) holds not even one call receiving a message of %d bytes", need-1, tc.recv))
			assert.ErrorContains(t, err, fmt.Sprintf("it takes at least %d bytes", need))
			opts.WireBudget = need
			s, err := NewServer(NewStore(nil), opts)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, s.wire.size-s.wire.headroom, int64(tc.recv)+2*int64(tc.msg), "one call fits beside the headroom")
			s.Shutdown(context.Background())
		})
	}
}
