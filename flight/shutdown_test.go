package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
)

// gatedGet GETs the data URL u as a slow client does: on a connection with a small receive
// buffer, it reads the first 64 KiB of the stream, says so on started, and reads nothing more
// until gate is closed, then the rest. It returns the body and the response's status trailer.
func gatedGet(u string, started chan<- struct{}, gate <-chan struct{}) (body []byte, trailer string, err error) {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			err = c.(*net.TCPConn).SetReadBuffer(32 << 10)
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	first := make([]byte, 64<<10)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		return nil, "", err
	}
	started <- struct{}{}
	if gate != nil {
		<-gate
	}
	rest, err := io.ReadAll(resp.Body)
	return append(first, rest...), resp.Trailer.Get(statusHeader), err
}

// gatedFetch gets name by DoGet with c as a slow client does: after the first message it
// says so on started and takes nothing more until gate is closed.
func gatedFetch(c *Client, name string, started chan<- struct{}, gate <-chan struct{}) (dataset.Tensor, error) {
	first := true
	return c.Get(context.Background(), name, WithProgress(func(_, _ int64) {
		if first {
			first = false
			started <- struct{}{}
			<-gate
		}
	}))
}

// logLines returns the JSON lines of logs whose message is msg.
func logLines(t *testing.T, logs *syncBuffer, msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestShutdownDrainsThenCuts: Shutdown with a grace period refuses new calls and data URL
// GETs (Unavailable, ErrShuttingDown) while Draining says so, lets the streams under way that
// end within the grace finish whole — a DoGet and a data URL — then cuts those still running,
// each ending with Unavailable naming the grace period (a DoGet's status, a data URL's
// trailer), logs each stream it cut (method, flight, client, bytes sent), and returns within a
// second of the grace period, holding nothing.
func TestShutdownDrainsThenCuts(t *testing.T) {
	const grace = 3 * time.Second
	logs := &syncBuffer{}
	s := serve(t, Options{MaxMessageBytes: 1 << 20, Logger: slog.New(slog.NewJSONHandler(logs, nil))}, "grpc")
	big := ndarray.New[uint8](3072, 8192) // 24 MiB: more than a client's window and a socket's buffers
	for i := range big.Data() {
		big.Data()[i] = byte(i * 7)
	}
	require.NoError(t, s.store.Add("big", dataset.Tensor{Dense: big}))
	grpcOnly := dial(t, s.uri, ClientOptions{GRPCOnly: true})
	fi, err := grpcOnly.fc.GetFlightInfo(context.Background(), pathDescriptor("big"))
	require.NoError(t, err)
	locs := fi.Endpoint[0].Location
	require.Len(t, locs, 2, "the DoGet location, then the data URL")
	dataURL := locs[1].Uri
	whole, trailer, err := gatedGet(dataURL, make(chan struct{}, 1), nil)
	require.NoError(t, err)
	require.Empty(t, trailer)

	started := make(chan struct{}, 4)
	finish, cut := make(chan struct{}), make(chan struct{})
	type fetched struct {
		t   dataset.Tensor
		err error
	}
	type got struct {
		body    []byte
		trailer string
		err     error
	}
	withinGet, beyondGet := make(chan fetched, 1), make(chan fetched, 1)
	withinURL, beyondURL := make(chan got, 1), make(chan got, 1)
	go func() { t, err := gatedFetch(grpcOnly, "big", started, finish); withinGet <- fetched{t, err} }()
	go func() { t, err := gatedFetch(grpcOnly, "big", started, cut); beyondGet <- fetched{t, err} }()
	go func() { b, tr, err := gatedGet(dataURL, started, finish); withinURL <- got{b, tr, err} }()
	go func() { b, tr, err := gatedGet(dataURL, started, cut); beyondURL <- got{b, tr, err} }()
	for range 4 {
		<-started
	}

	require.False(t, s.Draining())
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	begun := time.Now()
	stopped := make(chan struct{})
	go func() { s.Shutdown(ctx); close(stopped) }()
	<-s.DrainStarted()
	require.True(t, s.Draining())
	waiting := logLines(t, logs, "flight: shutting down: waiting for the calls under way")
	require.Len(t, waiting, 1)
	assert.EqualValues(t, 4, waiting[0]["calls"], "the four streams were under way")
	// what was left of the deadline when Shutdown began, to a tenth of a second: 3s unless the
	// goroutine that called it started late
	said, err := time.ParseDuration(waiting[0]["grace"].(string))
	require.NoError(t, err)
	assert.LessOrEqual(t, said, grace)
	assert.Greater(t, said, grace-time.Second)
	assert.Equal(t, said, said.Round(100*time.Millisecond), "to a tenth of a second")

	t.Run("new calls are refused", func(t *testing.T) {
		_, err := grpcOnly.List(context.Background())
		require.ErrorIs(t, err, ErrShuttingDown)
		assert.Equal(t, codes.Unavailable, status.Code(err))
		assert.ErrorContains(t, err, "flight: server shutting down: it takes no new calls; retry against another server or later")
		resp, err := http.Get(dataURL)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "14 flight: server shutting down: it takes no new calls; retry against another server or later", resp.Header.Get(statusHeader))
	})
	t.Run("streams within the grace finish whole", func(t *testing.T) {
		close(finish)
		f := <-withinGet
		require.NoError(t, f.err)
		assert.True(t, bytes.Equal(big.Data(), f.t.Dense.(*ndarray.Dense[uint8]).Data()))
		g := <-withinURL
		require.NoError(t, g.err)
		assert.Empty(t, g.trailer)
		assert.True(t, bytes.Equal(whole, g.body), "the stream of the data URL, %d bytes of %d", len(g.body), len(whole))
	})
	t.Run("the rest are cut with the shutting-down status", func(t *testing.T) {
		const cutMsg = "flight: shutdown cut a stream at the end of the grace period"
		require.Eventually(t, func() bool { return len(logLines(t, logs, cutMsg)) == 2 }, grace+5*time.Second, 10*time.Millisecond)
		close(cut) // the clients read on, and find the status after what was sent
		says := "flight: server shutting down: the stream was cut after the grace period of " + said.String() + "; retry against another server or later"
		f := <-beyondGet
		require.ErrorIs(t, f.err, ErrShuttingDown)
		assert.Equal(t, codes.Unavailable, status.Code(f.err))
		assert.ErrorContains(t, f.err, says)
		g := <-beyondURL
		require.NoError(t, g.err)
		assert.Equal(t, "14 "+says, g.trailer)
		assert.Less(t, len(g.body), len(whole))

		methods := map[string]map[string]any{}
		for _, l := range logLines(t, logs, cutMsg) {
			methods[l["method"].(string)] = l
		}
		require.Len(t, methods, 2)
		for _, method := range []string{"DoGet", "GET /arrow-flight/v1/get"} {
			l := methods[method]
			require.NotNil(t, l, method)
			assert.Equal(t, "big", l["flight"], method)
			assert.Contains(t, l["client"], "127.0.0.1:", method)
			assert.Greater(t, l["sent_bytes"], float64(64<<10), method)
			assert.Equal(t, said.String(), l["grace"], method)
		}
	})
	<-stopped
	assert.Less(t, time.Since(begun), grace+time.Second, "Shutdown returns within a second of the grace period")
}

// TestShutdownWithoutCallsIsAtOnce: a server with nothing under way stops as soon as Shutdown
// is called, whatever its grace period, and refuses every call after.
func TestShutdownWithoutCallsIsAtOnce(t *testing.T) {
	s := serve(t, Options{}, "grpc")
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: ndarray.New[int32](4, 2)}))
	c := dial(t, s.uri, ClientOptions{})
	_, err := c.List(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	s.Shutdown(ctx)
	require.True(t, s.Draining())
	_, err = c.List(context.Background())
	require.Error(t, err)
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
}
