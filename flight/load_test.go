package flight

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// The load test's server: small budgets, so that clients contend for them.
const (
	loadMemoryBudget = 96 << 20
	loadWireBudget   = 96 << 20
	// loadConstant is what the server may hold beyond its two budgets: the Go runtime, the
	// frame buffers kept for reuse (at most 80 MiB), garbage the collector has not reclaimed
	// yet. Options.MemoryBudget and README state it.
	loadConstant = budgetConstant
	loadDir      = "NDARROW_LOAD_DIR"
)

// TestServerUnderLoad runs a server in a child process (whose memory is then the server's
// alone, under an address-space limit) while, in this process, clients upload, fetch, list and
// delete, others stall, idle and send garbage, and a writer replaces and rewrites the served
// files: the server never dies; every answer is right — an upload stored whole and fetched bit
// for bit, a served file fetched as exactly one of its versions — or a clear error
// (ResourceExhausted naming a budget, DataLoss naming the file, NotFound, FailedPrecondition
// naming a file scanned while it was rewritten in place); its memory stays
// within the two budgets and a stated constant; and once the clients are gone its memory,
// descriptors and goroutines are back where they started.
func TestServerUnderLoad(t *testing.T) {
	dir := t.TempDir()
	writeLoadFiles(t, dir, 1)

	uri, done := startServerChild(t, "TestServerUnderLoadChild", 2<<30, loadDir+"="+dir)
	if uri != "" {
		stats := runLoad(t, uri, dir, 4*time.Second)
		t.Logf("%+v", stats)
	}
	done()
}

// serverChildPrefix starts the line on which a server child prints its address.
const serverChildPrefix = "load-server: "

// startServerChild starts the test name of this binary as a child process under an
// address-space limit of limit bytes, with env added to its environment: a server that prints
// its address (serveChild), then serves until its standard input closes. It returns the
// address ("" when the child printed none) and done, which closes the child's input — the
// clients are gone: the child checks what is left and ends — and fails t unless the child
// passed.
func startServerChild(t *testing.T, name string, limit int64, env ...string) (uri string, done func()) {
	t.Helper()
	cmd := childtest.Command(name, limit)
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	// The child prints its address, then everything else — its server's log, a record a call —
	// which is kept for Check: the pipe is read as the child writes (a pipe's buffer holds 64
	// KiB: a child whose log is not read stops at its next line, mid-call) and to its end before
	// Wait closes it.
	var out bytes.Buffer
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 64<<10), 16<<20)
	for uri == "" && lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if after, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), serverChildPrefix); ok {
			uri = after
		}
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		for lines.Scan() {
			out.WriteString(lines.Text() + "\n")
		}
	}()
	return uri, func() {
		t.Helper()
		stdin.Close()
		<-read
		childtest.Check(t, name, out.String, cmd.Wait())
	}
}

// serveChild, in a child startServerChild started, prints the address of s, samples the
// process's resident memory (sampleResident) until the parent's clients are gone (its
// standard input closes), and returns the peaks.
func serveChild(s *testServer) residentPeaks {
	stop := sampleResident()
	fmt.Printf("%s%s\n", serverChildPrefix, s.uri)
	io.Copy(io.Discard, os.Stdin) // until the clients are gone
	return stop()
}

// TestServerUnderLoadChild is the server of TestServerUnderLoad.
func TestServerUnderLoadChild(t *testing.T) {
	dir := os.Getenv(loadDir)
	if dir == "" || !childtest.Child(t) {
		t.Skip("the server of TestServerUnderLoad, run only as its child process")
	}
	debug.SetMemoryLimit(loadMemoryBudget + loadWireBudget + loadConstant/2) // as serve sets it
	s := serve(t, Options{
		Writable:     true,
		MemoryBudget: loadMemoryBudget, WireBudget: loadWireBudget, BudgetWait: 2 * time.Second,
		MaxRecvMessageBytes: 8 << 20, StallTimeout: time.Second, IdleTimeout: time.Second,
	}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = s.store.Watch(ctx, func(Changes, error) {})
	}()
	time.Sleep(100 * time.Millisecond) // watching
	runtime.GC()
	fds, goroutines, baseRSS := openFiles(t), runtime.NumGoroutine(), anonResident(t)

	peak := serveChild(s)

	// What the clients left: nothing (they deleted their uploads and closed their connections).
	require.Eventually(t, func() bool { return s.wire.inUse() == 0 }, 30*time.Second, 10*time.Millisecond,
		"the wire budget is whole again: %d bytes held", s.wire.inUse())
	require.Eventually(t, func() bool { return s.budget.inUse() == 0 }, 30*time.Second, 10*time.Millisecond,
		"the memory budget is whole again: %d bytes held", s.budget.inUse())
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= goroutines+2 }, 30*time.Second, 10*time.Millisecond,
		"goroutines: %d, %d before", runtime.NumGoroutine(), goroutines)
	require.Eventually(t, func() bool { return openFiles(t) <= fds }, 30*time.Second, 10*time.Millisecond,
		"descriptors: %d, %d before", openFiles(t), fds)
	runtime.GC()
	debug.FreeOSMemory()
	after := anonResident(t)
	t.Logf("child: anonymous memory %d MiB at start, peak %d MiB (budgets %d MiB + %d MiB, constant %d MiB), %d MiB after",
		baseRSS>>20, peak.Anon>>20, loadMemoryBudget>>20, loadWireBudget>>20, loadConstant>>20, after>>20)
	if !childtest.RaceEnabled { // whose shadow memory grows with what the program touched
		assert.LessOrEqual(t, peak.Anon-baseRSS, int64(loadMemoryBudget+loadWireBudget+loadConstant),
			"the server holds at most its budgets and the constant")
		assert.LessOrEqual(t, after-baseRSS, int64(32<<20), "memory returns once the clients are gone")
	}
	stop()
	<-watched
}

// openFiles counts the process's open descriptors.
func openFiles(t testing.TB) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// anonResident returns the process's resident anonymous memory (the heap, the frames, the
// uploads' regions; not the served files' pages), from /proc/self/status.
func anonResident(t testing.TB) int64 {
	v, ok := procStatus("RssAnon")
	if !ok {
		t.Skip("no RssAnon in /proc/self/status")
	}
	return v
}

// procStatus returns the field of /proc/self/status given in kB (VmHWM, RssAnon, RssFile), in
// bytes; false where there is none.
func procStatus(field string) (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// residentPeaks are the most resident memory a process held: Anon and File sampled (each at
// its own peak), HWM the kernel's high-water mark of the whole (VmHWM), exact.
type residentPeaks struct{ Anon, File, HWM int64 }

// sampleResident samples the process's resident memory every millisecond until the function
// it returns is called, which returns the peaks.
func sampleResident() (stop func() residentPeaks) {
	var peak residentPeaks
	quit, sampled := make(chan struct{}), make(chan struct{})
	sample := func() {
		if v, ok := procStatus("RssAnon"); ok {
			peak.Anon = max(peak.Anon, v)
		}
		if v, ok := procStatus("RssFile"); ok {
			peak.File = max(peak.File, v)
		}
	}
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() residentPeaks {
		close(quit)
		<-sampled
		sample()
		peak.HWM, _ = procStatus("VmHWM")
		return peak
	}
}

// The served files' shapes: every version holds one value throughout, its version number.
const loadRows, loadCols = 8192, 256

// writeLoadFiles writes version v of the served files: x.npy and t.parquet (column emb).
func writeLoadFiles(t *testing.T, dir string, v float32) {
	replaceFile(t, filepath.Join(dir, "x.npy"), npyBytes(t, loadRows, loadCols, v))
	tmp := filepath.Join(dir, ".tmp-t.parquet")
	parquettest.WriteTensors(t, tmp, parquet.WriterOptions{RowGroupBytes: 1 << 20},
		dataset.Tensor{Name: "emb", Kind: dataset.KindFixedShape, Dense: ndarray.Full(v, loadRows, loadCols)})
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "t.parquet")))
}

// loadStats counts what the clients saw.
type loadStats struct {
	Puts, Stored, Refused, Gets, Served, DataLoss, Gone, Unreadable, Busy, Lists, Deletes, Cut atomic.Int64
}

func (s *loadStats) String() string {
	return fmt.Sprintf("puts %d (stored %d, refused %d), gets %d (served %d, data loss %d, gone %d, unreadable %d, busy %d), lists %d, deletes %d, stalled streams cut %d",
		s.Puts.Load(), s.Stored.Load(), s.Refused.Load(), s.Gets.Load(), s.Served.Load(), s.DataLoss.Load(), s.Gone.Load(),
		s.Unreadable.Load(), s.Busy.Load(), s.Lists.Load(), s.Deletes.Load(), s.Cut.Load())
}

// runLoad drives the server at uri for d and returns what the clients saw; every answer is
// checked as it comes.
func runLoad(t *testing.T, uri, dir string, d time.Duration) *loadStats {
	stats := &loadStats{}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	var version atomic.Int64
	version.Store(1)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
	}
	// busy reports whether err is a budget's refusal, which a client under load may get.
	busy := func(err error) bool {
		return status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "budget")
	}

	// The writer: a new version of the files every 30 ms, by rename or rewritten in place.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(deadline); i++ {
			v := version.Add(1)
			if i%3 == 2 {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "x.npy"), npyBytes(t, loadRows, loadCols, float32(v)), 0o644))
			} else {
				writeLoadFiles(t, dir, float32(v))
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()

	// Clients that upload, fetch, list and delete.
	for id := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(uri, ClientOptions{GRPCOnly: id%2 == 0})
			require.NoError(t, err)
			defer c.Close()
			rng := mrand.New(mrand.NewPCG(uint64(id), 99))
			mine := map[string]*ndarray.Dense[float32]{}
			for k := 0; time.Now().Before(deadline); k++ {
				switch op := rng.IntN(10); {
				case op < 3: // upload
					x := randomDense[float32](rng, 1+rng.Int64N(4096), 256)
					name := fmt.Sprintf("c%d-%d", id, k)
					stats.Puts.Add(1)
					switch err := c.Put(context.Background(), name, dataset.Tensor{Dense: x}); {
					case err == nil:
						stats.Stored.Add(1)
						mine[name] = x
					case busy(err):
						stats.Refused.Add(1)
					default:
						fail("put %s: %v", name, err)
					}
				case op < 5 && len(mine) > 0: // fetch an upload
					for name, want := range mine {
						stats.Gets.Add(1)
						got, err := GetDense[float32](context.Background(), c, name)
						switch {
						case err == nil:
							stats.Served.Add(1)
							if !sameBits(got, want) {
								fail("get %s: not what was stored", name)
							}
						case busy(err):
							stats.Busy.Add(1)
						default:
							fail("get %s: %v", name, err)
						}
						break
					}
				case op < 8: // fetch a served file
					name := []string{"x", "t.emb"}[rng.IntN(2)]
					stats.Gets.Add(1)
					got, err := GetDense[float32](context.Background(), c, name)
					switch {
					case err == nil:
						stats.Served.Add(1)
						v := got.Data()[0]
						if v < 1 || int64(v) > version.Load() {
							fail("get %s: version %v was never written", name, v)
						}
						for i, x := range got.Data() {
							if x != v {
								fail("get %s: value %d is %v in version %v: two versions mixed", name, i, x, v)
								break
							}
						}
					case status.Code(err) == codes.DataLoss:
						stats.DataLoss.Add(1)
						if !strings.Contains(err.Error(), ".npy") && !strings.Contains(err.Error(), ".parquet") {
							fail("get %s: DataLoss naming no file: %v", name, err)
						}
					case status.Code(err) == codes.NotFound || errors.Is(err, ErrNotFound):
						stats.Gone.Add(1) // between a removal and the next version
					case status.Code(err) == codes.FailedPrecondition && errors.Is(err, ErrUnreadable):
						stats.Unreadable.Add(1) // scanned while rewritten in place: not served until whole
						if !strings.Contains(err.Error(), "unreadable part x.npy: ") {
							fail("get %s: an unreadable part, not named: %v", name, err)
						}
					case busy(err):
						stats.Busy.Add(1)
					default:
						fail("get %s: %v", name, err)
					}
				case op < 9:
					stats.Lists.Add(1)
					if _, err := c.List(context.Background()); err != nil && !busy(err) {
						fail("list: %v", err)
					}
				default:
					for name := range mine {
						stats.Deletes.Add(1)
						if err := c.Delete(context.Background(), name); err != nil {
							fail("delete %s: %v", name, err)
						}
						delete(mine, name)
						break
					}
				}
			}
			for name := range mine {
				if err := c.Delete(context.Background(), name); err != nil {
					fail("delete %s: %v", name, err)
				}
			}
		}()
	}

	// Clients that stall: a DoGet read by no one, with a small window.
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				conn, err := grpc.NewClient(uri[len("grpc://"):], grpc.WithTransportCredentials(insecure.NewCredentials()),
					grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
				require.NoError(t, err)
				stream, err := arrowflight.NewClientFromConn(conn, nil).DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte("t.emb")})
				if err == nil {
					time.Sleep(1500 * time.Millisecond) // past the server's stall timeout
					for err == nil {
						_, err = stream.Recv()
					}
					if code := status.Code(err); code == codes.DeadlineExceeded || code == codes.Canceled {
						stats.Cut.Add(1)
					}
				}
				conn.Close()
			}
		}()
	}

	// Connections that idle, or send garbage.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(deadline); i++ {
			conn, err := net.Dial("tcp", uri[len("grpc://"):])
			if err != nil {
				continue
			}
			if i%2 == 0 {
				conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"))
			} else {
				conn.Write(bytes.Repeat([]byte{0xde, 0xad}, 1024))
			}
			go func() {
				io.Copy(io.Discard, conn) // until the server closes it
				conn.Close()
			}()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	wg.Wait()
	return stats
}
