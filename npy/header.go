package npy

import (
	"fmt"
	"io"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Info is what a .npy file's header says of its values: their element type, shape and order, and
// where they lie. A reader that brings a file into memory range by range (an object in
// object storage) reads it first (HeaderSize, ReadHeader), then the values it needs (Rows).
type Info struct {
	DType      ndarray.DType
	ItemSize   int  // the bytes of one element (of a string array, its width)
	Text       byte // of a string array: 'S' (bytes) or 'U' (UCS-4 text); else 0
	Shape      ndarray.Shape
	Fortran    bool  // column-major values
	BigEndian  bool  // values stored big-endian (Rows swaps them)
	DataOffset int64 // where the values start
	DataLen    int64 // the bytes of values the shape needs
}

// HeaderSize returns the bytes of the preamble and header of the .npy file whose first bytes
// (at least 12, or the whole file) are b: the length of the file's start ReadHeader reads.
func HeaderSize(b []byte, lim Limits) (int64, error) {
	p, err := parsePreamble(b, lim.WithDefaults())
	if err != nil {
		return 0, err
	}
	return p.size + p.headerLen, nil
}

// ReadHeader reads the preamble and header of the .npy file starting b, which need hold only
// them, checked as ReadBytes checks them.
func ReadHeader(b []byte, lim Limits) (Info, error) {
	lim = lim.WithDefaults()
	p, err := parsePreamble(b, lim)
	if err != nil {
		return Info{}, err
	}
	if p.headerLen > int64(len(b))-p.size {
		return Info{}, fmt.Errorf("npy: file ends inside the %d-byte header: %w", p.headerLen, io.ErrUnexpectedEOF)
	}
	h, d, big, need, err := decode(p, b[p.size:p.size+p.headerLen], lim)
	if err != nil {
		return Info{}, err
	}
	return Info{DType: d.dtype, ItemSize: d.size, Text: d.text, Shape: h.shape, Fortran: h.fortran, BigEndian: big, DataOffset: p.size + p.headerLen, DataLen: need}, nil
}

// RowBytes returns the bytes of one row (the values of one index of the first dimension) of
// a row-major array: 0 for a scalar.
func (h Info) RowBytes() int64 {
	if len(h.Shape) == 0 {
		return 0
	}
	return h.Shape[1:].Size() * int64(h.ItemSize)
}

// Rows returns the n rows of a row-major array whose values are data (n × RowBytes bytes, in
// the file's byte order, from row-aligned offsets in the file): an array of shape [n,
// Shape[1:]...] that views data (swapped in place when big-endian).
func (h Info) Rows(n int64, data []byte) (*Array, error) {
	if h.Fortran || len(h.Shape) == 0 {
		return nil, fmt.Errorf("npy: rows of a %s array: %w", map[bool]string{true: "column-major", false: "scalar"}[h.Fortran], ErrUnsupported)
	}
	if n < 0 || n > h.Shape[0] || int64(len(data)) != n*h.RowBytes() {
		return nil, fmt.Errorf("npy: %d rows of %d bytes in %d bytes of data: %w", n, h.RowBytes(), len(data), ErrInvalid)
	}
	shape := append(ndarray.Shape{n}, h.Shape[1:]...)
	if h.BigEndian {
		ndarray.SwapBytes(data, elem{h.DType, h.ItemSize, h.Text}.swapWidth())
	}
	return &Array{dtype: h.DType, item: h.ItemSize, text: h.Text, shape: shape, data: data, copied: h.BigEndian}, nil
}
