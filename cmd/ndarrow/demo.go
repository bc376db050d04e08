package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"unsafe"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/flight"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/ragged"
)

// runDemo runs the main job on a built-in example: it builds a batch of images, slices it
// with views and copies, reshapes it, streams it out and back, writes it as Arrow and NumPy
// files and reads them back zero-copy from memory maps, checking every step.
func runDemo(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if code, ok := parseArgs(flag.NewFlagSet("demo", flag.ContinueOnError), "demo", args, stdout, stderr, 0, 0); !ok {
		return code
	}
	if err := demo(stdout); err != nil {
		fmt.Fprintf(stderr, "ndarrow demo: %v\n", err)
		return exitFail
	}
	return exitOK
}

func demo(w io.Writer) error {
	step := func(title string) { fmt.Fprintf(w, "\n== %s\n", title) }

	// A batch of 4 grayscale images of 3×4 pixels; pixel (r, c) of image i is i·100 + r·10 + c.
	batch := ndarray.New[float32](4, 3, 4)
	for i, img := range batch.Elements() {
		for r, row := range img.Elements() {
			for c := range row.Size() {
				row.Set(float32(i*100+r*10+c), c)
			}
		}
	}
	step("a batch of images")
	fmt.Fprintf(w, "batch: %v %v, %d elements\n", batch.DType(), batch.Shape(), batch.Size())
	img2, err := batch.Slice(ndarray.At(2))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "image 2, a view (shares memory: %t):\n%v\n", img2.SharesMemory(batch), img2)

	step("views: no copies")
	views := []struct {
		what    string
		indices []ndarray.Index
	}{
		{"middle row of every image", []ndarray.Index{ndarray.All(), ndarray.At(1)}},
		{"2×2 crop of every image", []ndarray.Index{ndarray.All(), ndarray.Range(0, 2), ndarray.Range(1, 3)}},
		{"even images, mirrored", []ndarray.Index{ndarray.Even(), ndarray.Ellipsis(), ndarray.Flip()}},
		{"last pixel of each image, as a column", []ndarray.Index{ndarray.All(), ndarray.At(-1), ndarray.At(-1), ndarray.NewAxis()}},
	}
	for _, v := range views {
		s, err := batch.Slice(v.indices...)
		if err != nil {
			return err
		}
		if !s.SharesMemory(batch) {
			return fmt.Errorf("%s: expected a view", v.what)
		}
		fmt.Fprintf(w, "%s %v %v:\n%v\n", v.what, v.indices, s.Shape(), s)
	}

	step("a copy where strides cannot express the selection")
	picked, err := batch.Slice(ndarray.Incl(3, 0, 2), ndarray.At(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "first rows of images 3, 0, 2 %v, shares memory: %t\n%v\n", picked.Shape(), picked.SharesMemory(batch), picked)

	step("reshape and transpose")
	features, err := batch.Reshape(4, -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "as a feature matrix %v, a view: %t\n", features.Shape(), features.SharesMemory(batch))
	cols := features.Transpose()
	fmt.Fprintf(w, "transposed %v (strides %v), a view: %t\n", cols.Shape(), cols.Layout().Strides, cols.SharesMemory(batch))

	step("stream out and back")
	var buf bytes.Buffer
	crop, _ := batch.Slice(ndarray.All(), ndarray.Range(0, 2), ndarray.Range(1, 3))
	n, err := crop.WriteTo(&buf)
	if err != nil {
		return err
	}
	back := ndarray.New[float32](crop.Shape()...)
	if _, err := back.ReadFrom(&buf); err != nil {
		return err
	}
	if !back.Equal(crop) {
		return fmt.Errorf("stream round trip changed the values")
	}
	fmt.Fprintf(w, "wrote the strided crop as %d little-endian bytes, read it back into a new %v array: equal\n", n, back.Shape())

	step("read-only views")
	frozen := batch.AsReadOnly()
	msg := func() (msg any) {
		defer func() { msg = recover() }()
		frozen.Set(0, 0, 0, 0)
		return nil
	}()
	if msg == nil {
		return fmt.Errorf("a write to a read-only view did not panic")
	}
	fmt.Fprintf(w, "a write through a read-only view panics: %v\n", msg)

	if err := demoFiles(w, batch); err != nil {
		return err
	}
	if err := demoFlight(w, batch); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ndemo: ok")
	return nil
}

// demoFiles writes the batch as an Arrow Tensor message, a .npy file and an Arrow IPC stream of
// tensor-column record batches, and reads each back zero-copy from a memory map.
func demoFiles(w io.Writer, batch *ndarray.Dense[float32]) error {
	dir, err := os.MkdirTemp("", "ndarrow-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(w, "\n== Arrow and NumPy files (in %s, removed afterwards)\n", dir)

	// An Arrow Tensor message, as pyarrow.ipc.write_tensor writes it.
	tensorPath := filepath.Join(dir, "batch.tensor")
	if err := writeFile(tensorPath, func(f io.Writer) error {
		_, err := ipc.WriteTensor(f, batch, []string{"image", "row", "col"})
		return err
	}); err != nil {
		return err
	}
	rd, err := ipc.OpenFile(tensorPath, ipc.Limits{})
	if err != nil {
		return err
	}
	t, err := rd.Next()
	if err != nil {
		return err
	}
	mapped, err := ipc.AsDense[float32](t)
	if err != nil {
		return err
	}
	if !mapped.Equal(batch) {
		return fmt.Errorf("the tensor file read back different values")
	}
	fmt.Fprintf(w, "%s: %d bytes, one Tensor message; memory-mapped back as %v %v, dim names %v, zero-copy: %t\n",
		filepath.Base(tensorPath), fileSize(tensorPath), mapped.DType(), mapped.Shape(), t.DimNames(), withinBytes(mapped.Data(), t.Data()))
	t.Release()
	rd.Close()

	// A .npy file, as numpy.save writes it.
	npyPath := filepath.Join(dir, "batch.npy")
	if err := writeFile(npyPath, func(f io.Writer) error { _, err := npy.Write(f, batch); return err }); err != nil {
		return err
	}
	a, err := npy.Open(npyPath, npy.Limits{})
	if err != nil {
		return err
	}
	fromNpy, err := npy.AsDense[float32](a)
	if err != nil {
		return err
	}
	if !fromNpy.Equal(batch) {
		return fmt.Errorf("the .npy file read back different values")
	}
	fmt.Fprintf(w, "%s: %d bytes (data 64-byte aligned); memory-mapped back, zero-copy: %t\n",
		filepath.Base(npyPath), fileSize(npyPath), withinBytes(fromNpy.Data(), a.Data()))
	a.Release()

	// An Arrow IPC stream: the batch as an arrow.fixed_shape_tensor column, 2 images a batch.
	streamPath := filepath.Join(dir, "batch.arrows")
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "images", batch, []string{"row", "col"}, 2)
	if err != nil {
		return err
	}
	if err := writeFile(streamPath, func(f io.Writer) error {
		sw := arrowipc.NewWriter(f, arrowipc.WithSchema(recs[0].Schema()))
		for _, r := range recs {
			if err := sw.Write(r); err != nil {
				return err
			}
			r.Release()
		}
		return sw.Close()
	}); err != nil {
		return err
	}
	m, err := mmap.Open(streamPath)
	if err != nil {
		return err
	}
	defer m.Release()
	_, read, err := ipc.ReadRecordBatches(m.Bytes(), ipc.BatchOptions{})
	if err != nil {
		return err
	}
	zeroCopy := true
	var rows int64
	for _, rec := range read {
		part, err := arrowtensor.ToDense[float32](rec.Column(0).(*arrowtensor.FixedShapeTensorArray))
		if err != nil {
			return err
		}
		want, _ := batch.Slice(ndarray.Range(rows, rows+part.Dim(0)))
		if !part.Equal(want) {
			return fmt.Errorf("the record batch file read back different values")
		}
		zeroCopy = zeroCopy && withinBytes(part.Data(), m.Bytes())
		rows += part.Dim(0)
		rec.Release()
	}
	fmt.Fprintf(w, "%s: %d bytes, %d record batches of an %s column; memory-mapped back, %d rows, zero-copy: %t\n",
		filepath.Base(streamPath), fileSize(streamPath), len(recs), arrowtensor.FixedShapeTensorName, rows, zeroCopy)
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// withinBytes reports whether the values lie inside b's memory.
func withinBytes(values []float32, b []byte) bool {
	if len(values) == 0 || len(b) == 0 {
		return false
	}
	start, at := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&values[0]))
	return at >= start && at < start+uintptr(len(b))
}

// demoFlight serves the batch and a ragged array from a Flight server on a loopback port,
// with a bearer token, and fetches them back with the client.
func demoFlight(w io.Writer, batch *ndarray.Dense[float32]) error {
	fmt.Fprintln(w, "\n== Arrow Flight on loopback")
	store := flight.NewStore(nil)
	defer store.Close()
	if err := store.Add("images", dataset.Tensor{Kind: dataset.KindDense, Dense: batch}); err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	const token = "demo-token"
	srv, err := flight.NewServer(store, flight.Options{Token: token, MaxMessageBytes: 64 << 10, Writable: true})
	if err != nil {
		return err
	}
	go srv.Serve(lis)
	defer srv.Shutdown(context.Background())
	uri := "grpc://" + lis.Addr().String()
	c, err := flight.Dial(uri, flight.ClientOptions{Token: token, MaxMessageBytes: 64 << 10})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	tokens, err := ragged.FromRowSplits([]int32{7, 8, 9, 1, 2, 3, 4}, []int64{0, 3, 3, 7})
	if err != nil {
		return err
	}
	if err := c.Put(ctx, "tokens", dataset.Tensor{Kind: dataset.KindRagged, Ragged: tokens}); err != nil {
		return err
	}
	infos, err := c.List(ctx)
	if err != nil {
		return err
	}
	for _, in := range infos {
		fmt.Fprintf(w, "%s serves %s: %s %s %v, %d rows, %d bytes\n", uri, in.Name, in.Kind, in.DType, in.Shape, in.Rows, in.Bytes)
	}
	got, err := flight.GetDense[float32](ctx, c, "images")
	if err != nil {
		return err
	}
	if !got.Equal(batch) {
		return fmt.Errorf("flight: the images came back different")
	}
	back, err := flight.GetRagged[int32](ctx, c, "tokens")
	if err != nil {
		return err
	}
	if !ragged.Equal(back, tokens) {
		return fmt.Errorf("flight: the tokens came back different")
	}
	fmt.Fprintf(w, "DoGet images: %v %v, equal: true; DoPut + DoGet tokens: %v\n", got.DType(), got.Shape(), back)
	anon, err := flight.Dial(uri, flight.ClientOptions{})
	if err != nil {
		return err
	}
	defer anon.Close()
	_, err = anon.Get(ctx, "images")
	if !errors.Is(err, flight.ErrUnauthenticated) {
		return fmt.Errorf("flight: a client without the token was not refused: %v", err)
	}
	fmt.Fprintf(w, "without the token: %v\n", err)
	return nil
}
