package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/ndarrow/ndarrow/ndarray"
)

// runDemo runs the main job on a built-in example: it builds a batch of images, slices it
// with views and copies, reshapes it, streams it out and back, and checks every step.
func runDemo(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: ndarrow demo")
		return exitUsage
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

	fmt.Fprintln(w, "\ndemo: ok")
	return nil
}
