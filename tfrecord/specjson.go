package tfrecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ndarrow/ndarrow/ndarray"
)

// ReadSpec reads a feature spec written as JSON: an object whose keys are the features' names,
// in the order they are to be parsed, as a Python dict of tf.io feature specs is written —
//
//	{"image": {"dtype": "float32", "shape": [28, 28]},
//	 "label": {"dtype": "int64", "shape": [], "default": 0},
//	 "tokens": {"dtype": "int64", "ragged": true}}
//
// — or an array of such objects, each with its "name". dtype is int64, float32 or string
// (bytes: tf.string); shape, a fixed-length feature's row shape ([] for one value); default,
// for rows without the feature, one value or shape's size of them; ragged, a feature of rows
// of any length (then no shape or default). Any other key, a dtype an Example cannot hold or
// a feature named twice is an error wrapping ErrSpec.
func ReadSpec(r io.Reader) ([]Feature, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSpecBytes {
		return nil, fmt.Errorf("a feature spec of more than %d bytes: %w", maxSpecBytes, ErrSpec)
	}
	type named struct {
		Name string `json:"name"`
		specJSON
	}
	var out []Feature
	seen := map[string]bool{}
	add := func(name string, f specJSON) error {
		if name == "" {
			return fmt.Errorf("a feature without a name: %w", ErrSpec)
		}
		if seen[name] {
			return fmt.Errorf("feature %q named twice: %w", name, ErrSpec)
		}
		seen[name] = true
		feature, err := f.feature(name)
		if err != nil {
			return fmt.Errorf("feature %q: %w", name, err)
		}
		out = append(out, feature)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("JSON: %v: %w", err, ErrSpec)
	}
	switch tok {
	case json.Delim('['):
		for dec.More() {
			var f named
			if err := dec.Decode(&f); err != nil {
				return nil, fmt.Errorf("JSON: %v: %w", err, ErrSpec)
			}
			if err := add(f.Name, f.specJSON); err != nil {
				return nil, err
			}
		}
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("JSON: %v: %w", err, ErrSpec)
			}
			var f specJSON
			if err := dec.Decode(&f); err != nil {
				return nil, fmt.Errorf("feature %q: JSON: %v: %w", key, err, ErrSpec)
			}
			if err := add(key.(string), f); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("a feature spec is a JSON object of features or an array of them: %w", ErrSpec)
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return nil, fmt.Errorf("JSON: %v: %w", err, ErrSpec)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("JSON: more after its end: %w", ErrSpec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("a feature spec of no feature: %w", ErrSpec)
	}
	return out, nil
}

// maxSpecBytes bounds what ReadSpec reads.
const maxSpecBytes = 1 << 20

// specJSON is one feature of a JSON feature spec.
type specJSON struct {
	DType   string          `json:"dtype"`
	Shape   []int64         `json:"shape"`
	Default json.RawMessage `json:"default"`
	Ragged  bool            `json:"ragged"`
}

// feature returns the Feature f declares.
func (f specJSON) feature(name string) (Feature, error) {
	out := Feature{Name: name, Ragged: f.Ragged, Shape: ndarray.Shape(f.Shape)}
	switch f.DType {
	case "int64":
		out.DType = ndarray.Int64
	case "float32":
		out.DType = ndarray.Float32
	case "string", "bytes":
		out.DType = ndarray.String
	default:
		return Feature{}, fmt.Errorf("dtype %q: an Example holds int64, float32 or string: %w", f.DType, ErrSpec)
	}
	if f.Ragged {
		if f.Shape != nil || f.Default != nil {
			return Feature{}, fmt.Errorf("a ragged feature has no shape or default: %w", ErrSpec)
		}
		return out, nil
	}
	if f.Shape == nil {
		return Feature{}, fmt.Errorf("a fixed-length feature needs a shape ([] for one value): %w", ErrSpec)
	}
	if out.Shape == nil {
		out.Shape = ndarray.Shape{}
	}
	if err := out.Shape.Validate(); err != nil {
		return Feature{}, fmt.Errorf("shape %v: %v: %w", f.Shape, err, ErrSpec)
	}
	for _, d := range out.Shape {
		if d < 0 {
			return Feature{}, fmt.Errorf("shape %v: a fixed-length feature's dimensions are known: %w", f.Shape, ErrSpec)
		}
	}
	if f.Default == nil {
		return out, nil
	}
	d, err := defaultOf(out.DType, f.Default)
	if err != nil {
		return Feature{}, fmt.Errorf("default %s: %w", f.Default, err)
	}
	if n := d.Size(); n != 1 && n != out.Shape.Size() {
		return Feature{}, fmt.Errorf("default of %d values for rows of %d: %w", n, out.Shape.Size(), ErrSpec)
	}
	out.Default = d
	return out, nil
}

// defaultOf reads a default: one JSON value of dtype, or an array of them.
func defaultOf(dtype ndarray.DType, raw json.RawMessage) (ndarray.Array, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] != '[' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	switch dtype {
	case ndarray.Int64:
		return defaultValues[int64](raw)
	case ndarray.Float32:
		return defaultValues[float32](raw)
	}
	return defaultValues[string](raw)
}

// defaultValues reads a JSON array of T as a vector.
func defaultValues[T int64 | float32 | string](raw []byte) (ndarray.Array, error) {
	var v []T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not %v values: %w", ndarray.DTypeOf[T](), ErrSpec)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("no value: %w", ErrSpec)
	}
	return ndarray.FromSlice(v, int64(len(v)))
}
