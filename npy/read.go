package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ndarrow/ndarrow/internal/bounded"
	"github.com/ndarrow/ndarrow/ndarray"
)

// hostLittleEndian reports whether the machine is little-endian.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// preamble is the fixed start of a file: magic, version and header length.
type preamble struct {
	major     byte
	headerLen int64
	size      int64 // bytes before the header
}

// parsePreamble decodes the magic string, version and header length from the start of b,
// which holds at least 12 bytes or the whole file.
func parsePreamble(b []byte, lim Limits) (preamble, error) {
	if len(b) < 10 {
		if bytes.HasPrefix([]byte(magic), b) {
			return preamble{}, fmt.Errorf("npy: file ends inside the preamble: %w", io.ErrUnexpectedEOF)
		}
	}
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return preamble{}, fmt.Errorf("npy: no \\x93NUMPY magic string at byte 0: %w", ErrInvalid)
	}
	if len(b) < 8 {
		return preamble{}, fmt.Errorf("npy: file ends inside the preamble: %w", io.ErrUnexpectedEOF)
	}
	p := preamble{major: b[6]}
	switch {
	case b[6] == 1 && b[7] == 0:
		if len(b) < 10 {
			return preamble{}, fmt.Errorf("npy: file ends inside the preamble: %w", io.ErrUnexpectedEOF)
		}
		p.headerLen, p.size = int64(binary.LittleEndian.Uint16(b[8:])), 10
	case (b[6] == 2 || b[6] == 3) && b[7] == 0:
		if len(b) < 12 {
			return preamble{}, fmt.Errorf("npy: file ends inside the preamble: %w", io.ErrUnexpectedEOF)
		}
		p.headerLen, p.size = int64(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return preamble{}, fmt.Errorf("npy: format version %d.%d at byte 6: only 1.0, 2.0 and 3.0 exist: %w", b[6], b[7], ErrInvalid)
	}
	if p.headerLen > lim.MaxMetadataSize {
		return preamble{}, fmt.Errorf("npy: header of %d bytes exceeds the limit of %d: %w", p.headerLen, lim.MaxMetadataSize, ErrLimit)
	}
	return p, nil
}

// decode parses the header text and checks it against the limits, returning the element
// type, whether the data is big-endian, and the number of data bytes the shape needs.
func decode(p preamble, text []byte, lim Limits) (header, elem, bool, int64, error) {
	h, err := parseHeader(text, p.major)
	if err != nil {
		return header{}, elem{}, false, 0, err
	}
	d, big, err := parseDescr(h.descr)
	if err != nil {
		return header{}, elem{}, false, 0, err
	}
	if len(h.shape) > lim.MaxRank {
		return header{}, elem{}, false, 0, fmt.Errorf("npy: rank %d exceeds the limit of %d: %w", len(h.shape), lim.MaxRank, ErrLimit)
	}
	if err := h.shape.Validate(); err != nil {
		return header{}, elem{}, false, 0, fmt.Errorf("npy: shape %v: %w: %w", h.shape, ErrInvalid, err)
	}
	n := h.shape.Size()
	if n > lim.MaxElements {
		return header{}, elem{}, false, 0, fmt.Errorf("npy: shape %v has %d elements, more than the limit of %d: %w", h.shape, n, lim.MaxElements, ErrLimit)
	}
	if n > (1<<62)/int64(d.size) {
		return header{}, elem{}, false, 0, fmt.Errorf("npy: shape %v: data size overflows: %w", h.shape, ErrInvalid)
	}
	return h, d, big, n * int64(d.size), nil
}

// ReadBytes reads the .npy file in b. Little-endian values are not copied: the array's Data
// is a view of b, which must not change while the array is in use. It fails when the data is
// shorter than the shape needs (io.ErrUnexpectedEOF) or longer (ErrInvalid). The array needs
// no Release (Release on it does nothing).
func ReadBytes(b []byte, lim Limits) (*Array, error) {
	lim = lim.WithDefaults()
	p, err := parsePreamble(b, lim)
	if err != nil {
		return nil, err
	}
	if p.headerLen > int64(len(b))-p.size {
		return nil, fmt.Errorf("npy: file ends inside the %d-byte header: %w", p.headerLen, io.ErrUnexpectedEOF)
	}
	h, d, big, need, err := decode(p, b[p.size:p.size+p.headerLen], lim)
	if err != nil {
		return nil, err
	}
	data := b[p.size+p.headerLen:]
	switch {
	case int64(len(data)) < need:
		return nil, fmt.Errorf("npy: shape %v needs %d bytes of data, the file holds %d: %w", h.shape, need, len(data), io.ErrUnexpectedEOF)
	case int64(len(data)) > need:
		return nil, fmt.Errorf("npy: shape %v needs %d bytes of data, the file holds %d: %w", h.shape, need, len(data), ErrInvalid)
	}
	a := &Array{dtype: d.dtype, item: d.size, text: d.text, shape: h.shape, fortran: h.fortran, data: data}
	if big {
		a.data, a.copied = swapped(data, d.swapWidth()), true
	}
	return a, nil
}

// Read reads one .npy file from r, copying its values once; it reads nothing after them.
// Memory grows only as bytes arrive, so a header that claims a huge shape cannot make it
// allocate more than about twice the bytes r holds.
func Read(r io.Reader, lim Limits) (*Array, error) {
	lim = lim.WithDefaults()
	var pre [12]byte
	n, err := io.ReadFull(r, pre[:10])
	if err != nil {
		if _, perr := parsePreamble(pre[:n], lim); perr != nil {
			return nil, perr
		}
		return nil, fmt.Errorf("npy: file ends inside the preamble: %w", io.ErrUnexpectedEOF)
	}
	if pre[6] >= 2 {
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return nil, fmt.Errorf("npy: file ends inside the preamble: %w", io.ErrUnexpectedEOF)
		}
	}
	p, err := parsePreamble(pre[:], lim)
	if err != nil {
		return nil, err
	}
	text := make([]byte, p.headerLen) // bounded by lim.MaxMetadataSize
	if _, err := io.ReadFull(r, text); err != nil {
		return nil, fmt.Errorf("npy: file ends inside the %d-byte header: %w", p.headerLen, io.ErrUnexpectedEOF)
	}
	h, d, big, need, err := decode(p, text, lim)
	if err != nil {
		return nil, err
	}
	data, err := bounded.ReadFull(r, need)
	if err != nil {
		return nil, fmt.Errorf("npy: shape %v needs %d bytes of data, the file holds %d: %w", h.shape, need, len(data), io.ErrUnexpectedEOF)
	}
	if big {
		ndarray.SwapBytes(data, d.swapWidth())
	}
	return &Array{dtype: d.dtype, item: d.size, text: d.text, shape: h.shape, fortran: h.fortran, data: data, copied: true}, nil
}

// swapped returns a copy of b with the byte order of each width-byte value reversed.
func swapped(b []byte, width int) []byte {
	out := append([]byte(nil), b...)
	ndarray.SwapBytes(out, width)
	return out
}

// parseHeader parses the header dictionary NumPy writes, such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } followed by spaces and a
// newline. It accepts the keys in any order and double quotes, and nothing else: the three
// keys exactly once, string, boolean and tuple-of-integers values.
func parseHeader(text []byte, major byte) (header, error) {
	s := string(text)
	if major < 3 {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return header{}, fmt.Errorf("npy: header byte %d is not ASCII (format %d.0 headers are latin-1 text NumPy writes as ASCII): %w", i, major, ErrInvalid)
			}
		}
	}
	p := &headerParser{s: s}
	h, err := p.dict()
	if err != nil {
		return header{}, fmt.Errorf("npy: header %q: %w: %w", truncate(s), ErrInvalid, err)
	}
	return h, nil
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

type headerParser struct {
	s   string
	pos int
}

func (p *headerParser) space() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *headerParser) expect(c byte) error {
	p.space()
	if p.pos >= len(p.s) || p.s[p.pos] != c {
		return fmt.Errorf("expected %q at header byte %d", c, p.pos)
	}
	p.pos++
	return nil
}

func (p *headerParser) peek() byte {
	p.space()
	if p.pos >= len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

func (p *headerParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", fmt.Errorf("expected a string at header byte %d", p.pos)
	}
	end := strings.IndexByte(p.s[p.pos+1:], q)
	if end < 0 {
		return "", fmt.Errorf("unterminated string at header byte %d", p.pos)
	}
	v := p.s[p.pos+1 : p.pos+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", fmt.Errorf("escaped string at header byte %d", p.pos)
	}
	p.pos += end + 2
	return v, nil
}

func (p *headerParser) boolean() (bool, error) {
	p.space()
	for word, v := range map[string]bool{"True": true, "False": false} {
		if strings.HasPrefix(p.s[p.pos:], word) {
			p.pos += len(word)
			return v, nil
		}
	}
	return false, fmt.Errorf("expected True or False at header byte %d", p.pos)
}

func (p *headerParser) tuple() (ndarray.Shape, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	shape := ndarray.Shape{}
	for {
		if p.peek() == ')' {
			p.pos++
			if len(shape) == 1 && !strings.HasSuffix(strings.TrimRight(p.s[:p.pos-1], " "), ",") {
				return nil, fmt.Errorf("a one-element shape needs a trailing comma, like (3,), at header byte %d", p.pos)
			}
			return shape, nil
		}
		p.space()
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		if start == p.pos {
			return nil, fmt.Errorf("expected a dimension at header byte %d", p.pos)
		}
		n, err := strconv.ParseInt(p.s[start:p.pos], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dimension %q at header byte %d: %w", p.s[start:p.pos], start, err)
		}
		if len(shape) >= 1<<10 {
			return nil, fmt.Errorf("more than %d dimensions", 1<<10)
		}
		shape = append(shape, n)
		if p.peek() == ',' {
			p.pos++
		} else if p.peek() != ')' {
			return nil, fmt.Errorf("expected ',' or ')' at header byte %d", p.pos)
		}
	}
}

func (p *headerParser) dict() (header, error) {
	var h header
	if err := p.expect('{'); err != nil {
		return h, err
	}
	seen := map[string]bool{}
	for p.peek() != '}' {
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if seen[key] {
			return h, fmt.Errorf("key %q twice", key)
		}
		seen[key] = true
		if err := p.expect(':'); err != nil {
			return h, err
		}
		switch key {
		case "descr":
			h.descr, err = p.str()
		case "fortran_order":
			h.fortran, err = p.boolean()
		case "shape":
			h.shape, err = p.tuple()
		default:
			return h, fmt.Errorf("unexpected key %q", key)
		}
		if err != nil {
			return h, err
		}
		if p.peek() == ',' {
			p.pos++
		} else if p.peek() != '}' {
			return h, fmt.Errorf("expected ',' or '}' at header byte %d", p.pos)
		}
	}
	p.pos++
	if strings.Trim(p.s[p.pos:], " \t\r\n") != "" {
		return h, fmt.Errorf("text after the dictionary at header byte %d", p.pos)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("no %q key", k)
		}
	}
	return h, nil
}
