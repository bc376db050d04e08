package flight

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/internal/mutate"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// flightData splits an Arrow IPC stream (or the stream inside a file) into the FlightData a
// client would send for it: each message's flatbuffer and body apart, the first carrying the
// descriptor. Bytes that frame no message are sent as one last message's metadata, as a
// hostile client might.
func flightData(b []byte, name string) []*arrowflight.FlightData {
	msgs, rest := mutate.Messages(b)
	var out []*arrowflight.FlightData
	for _, m := range msgs {
		out = append(out, &arrowflight.FlightData{DataHeader: m.Meta, DataBody: m.Body})
	}
	if len(rest) > 8 && !bytes.HasPrefix(rest, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}) && !bytes.HasPrefix(b, []byte("ARROW1")) {
		out = append(out, &arrowflight.FlightData{DataHeader: rest})
	}
	if len(out) == 0 {
		out = []*arrowflight.FlightData{{DataHeader: rest}}
	}
	out[0].FlightDescriptor = pathDescriptor(name)
	return out
}

// put sends FlightData as one DoPut and returns the server's answer.
func put(t *testing.T, raw arrowflight.Client, fds []*arrowflight.FlightData) error {
	stream, err := raw.DoPut(context.Background())
	require.NoError(t, err)
	for _, fd := range fds {
		if stream.Send(fd) != nil {
			break
		}
	}
	_ = stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			if err == io.EOF { // the server answered with a PutResult and ended: stored
				return nil
			}
			return err
		}
	}
}

// TestUploadErrors: bad uploads are the client's errors (InvalidArgument), uploads beyond
// Options.Limits are ResourceExhausted, and a stream of a schema alone stores a tensor of no
// rows.
func TestUploadErrors(t *testing.T) {
	s := serve(t, Options{Writable: true, Limits: limits.Limits{MaxElements: 1000}}, "grpc")
	raw := rawClient(t, s.uri)
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()

	good := streamOf(t, dataset.Tensor{Dense: ndarray.New[float32](4, 3)})
	fds := flightData(good, "empty")
	require.NoError(t, put(t, raw, fds[:1]), "a schema without batches")
	got, err := c.Get(ctx, "empty")
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{0, 3}, got.Shape())

	in := mutate.Scan(good)
	length, ok := in.Find("RecordBatch.nodes[1].length")
	require.True(t, ok)
	for _, tc := range []struct {
		name  string
		input []byte
		code  codes.Code
		text  string
	}{
		{"a child longer than the limit", mutate.Set(good, length, 5000), codes.ResourceExhausted, "limit 1000"},
		{"a child shorter than its lists", mutate.Set(good, length, 5), codes.InvalidArgument, "child values"},
		{"garbage", []byte("\xff\xff\xff\xff\x10\x00\x00\x00garbage garbage!"), codes.InvalidArgument, "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := put(t, raw, flightData(tc.input, "bad"))
			st := status.Convert(err)
			assert.Equal(t, tc.code, st.Code(), "%v", err)
			assert.Contains(t, st.Message(), tc.text)
		})
	}
	big := streamOf(t, dataset.Tensor{Dense: ndarray.New[float32](400, 3)})
	err = put(t, raw, flightData(big, "big"))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "1200 values above MaxElements 1000: %v", err)
}

// streamOf returns the IPC stream a server would send for t, in one batch.
func streamOf(t *testing.T, x dataset.Tensor) []byte {
	msgs := flightMessages(x, "x", 0)
	require.NotNil(t, msgs)
	var b []byte
	for _, m := range msgs {
		b = binary.LittleEndian.AppendUint32(b, 0xFFFFFFFF)
		padded := (len(m.header) + 7) &^ 7
		b = binary.LittleEndian.AppendUint32(b, uint32(padded))
		b = append(b, m.header...)
		b = append(b, make([]byte, padded-len(m.header))...)
		b = append(b, m.body...)
	}
	return append(b, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
}

// TestHostileUploads sends every file of Arrow's own IPC corpus (crash reproducers and the
// integration files of many implementations) and every mutant of golden record-batch files
// as DoPut uploads to a server in a child process with 2 GiB of address space: the server
// answers each with InvalidArgument or ResourceExhausted (or stores it), never dies,
// allocates no more than an upload's size justifies, leaks nothing (serve checks its
// allocator), and still serves its tensors bit for bit afterwards.
func TestHostileUploads(t *testing.T) {
	childtest.Run(t, "TestHostileUploadsChild", 2<<30)
}

// TestHostileUploadsChild is the child side of TestHostileUploads.
func TestHostileUploadsChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("the body of TestHostileUploads, run only as its child process")
	}
	s := serve(t, Options{Writable: true, MaxMessageBytes: 1 << 20}, "grpc")
	rng := rand.New(rand.NewPCG(11, 12))
	keep := randomDense[float64](rng, 50, 7)
	require.NoError(t, s.store.Add("keep", dataset.Tensor{Dense: keep}))
	raw := rawClient(t, s.uri)

	var inputs []string
	for _, pattern := range []string{"arrow-ipc-stream/*", "arrow-ipc-file/*", "arrow-ipc-stream/integration/*/*"} {
		files, err := filepath.Glob(filepath.Join("../ipc/testdata/arrow-testing", pattern))
		require.NoError(t, err)
		inputs = append(inputs, files...)
	}
	uploads, stored, worst := 0, 0, uint64(0)
	send := func(b []byte) {
		uploads++
		before := childtest.Allocated()
		err := put(t, raw, flightData(b, "upload"))
		used := childtest.Allocated() - before // the client's and the server's
		worst = max(worst, used)
		if budget := uint64(64*len(b)) + 16<<20; used > budget {
			t.Errorf("upload %d of %d bytes allocated %d bytes", uploads, len(b), used)
		}
		switch status.Code(err) {
		case codes.OK:
			stored++
		case codes.InvalidArgument, codes.ResourceExhausted:
		default:
			t.Errorf("upload %d: %v: bad bytes are the client's error, not the server's", uploads, err)
		}
	}
	for _, path := range inputs {
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || strings.HasSuffix(path, ".md") {
			continue
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		send(b)
	}
	mutants := 0
	for _, path := range []string{"../ipc/testdata/arrow-cpp-17/batch_tensors.arrows"} {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, col := range splitColumns(t, b) {
			mutate.All(col, func(m mutate.Mutant) bool {
				mutants++
				send(m.Bytes)
				return true
			})
		}
	}
	t.Logf("child: %d uploads (%d mutants), %d stored, at most %d KiB allocated by one", uploads, mutants, stored, worst>>10)
	got, err := GetDense[float64](context.Background(), dial(t, s.uri, ClientOptions{}), "keep")
	require.NoError(t, err)
	assert.True(t, sameBits(got, keep), "the good tensor is served bit for bit")
}

// splitColumns returns, for each tensor column of a golden batch stream, the stream a Flight
// client would upload for it alone.
func splitColumns(t *testing.T, b []byte) [][]byte {
	tensors, _, err := dataset.Read(b, "g", limits.Limits{})
	require.NoError(t, err)
	var out [][]byte
	for _, x := range tensors {
		out = append(out, streamOf(t, x))
	}
	return out
}

// fakeOrigin is a Flight server that answers GetFlightInfo with another server's FlightInfo
// whose endpoint it points at another location: a server cannot be trusted with where it
// sends its clients.
type fakeOrigin struct {
	arrowflight.BaseFlightServer
	info *arrowflight.FlightInfo
}

func (f *fakeOrigin) GetFlightInfo(context.Context, *arrowflight.FlightDescriptor) (*arrowflight.FlightInfo, error) {
	return f.info, nil
}

// startFake serves a fakeOrigin listing location as its one endpoint, over TLS when cfg is set.
func startFake(t *testing.T, info *arrowflight.FlightInfo, location string, cfg *tls.Config) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var opts []grpc.ServerOption
	scheme := "grpc"
	if cfg != nil {
		opts, scheme = append(opts, grpc.Creds(credentials.NewTLS(cfg))), "grpc+tls"
	}
	g := grpc.NewServer(opts...)
	redirected := proto.Clone(info).(*arrowflight.FlightInfo)
	redirected.Endpoint = []*arrowflight.FlightEndpoint{{Ticket: info.Endpoint[0].Ticket, Location: []*arrowflight.Location{{Uri: location}}}}
	arrowflight.RegisterFlightServiceServer(g, &fakeOrigin{info: redirected})
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return scheme + "://" + lis.Addr().String()
}

// TestCredentialsStayWithTheOrigin: the token goes to the server the client dialed and to
// the servers TokenEndpoints names, not to whatever server a FlightInfo names; and a server
// reached over TLS cannot send the client to a plaintext endpoint.
func TestCredentialsStayWithTheOrigin(t *testing.T) {
	const token = "secret"
	third := serve(t, Options{Token: token}, "grpc") // holds the tensor, wants the token
	require.NoError(t, third.store.Add("x", dataset.Tensor{Dense: ndarray.New[int32](2, 2)}))
	fi, err := dial(t, third.uri, ClientOptions{Token: token}).fc.GetFlightInfo(context.Background(), pathDescriptor("x"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	origin := startFake(t, fi, third.uri, nil)
	_, err = dial(t, origin, ClientOptions{Token: token}).Get(ctx, "x")
	require.ErrorIs(t, err, ErrUnauthenticated, "the token was not sent to the server the origin named")

	got, err := dial(t, origin, ClientOptions{Token: token, TokenEndpoints: []string{third.uri}}).Get(ctx, "x")
	require.NoError(t, err, "a server the caller allows receives the token")
	assert.Equal(t, ndarray.Shape{2, 2}, got.Shape())

	ca, caKey := newCA(t, "test CA")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	tlsOrigin := startFake(t, fi, third.uri, &tls.Config{Certificates: []tls.Certificate{leaf(t, ca, caKey, "origin", true)}, MinVersion: tls.VersionTLS12})
	_, err = dial(t, tlsOrigin, ClientOptions{Token: token, TLS: &tls.Config{RootCAs: pool}, TokenEndpoints: []string{third.uri}}).Get(ctx, "x")
	require.ErrorIs(t, err, ErrInsecureEndpoint, "never from TLS to plaintext, even to an allowed server")
	assert.ErrorContains(t, err, third.uri)
}
