package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/ndarrow/ndarrow/ipc/tensorfile"
	"github.com/ndarrow/ndarrow/limits"
)

// tensor is one tensor found in an input file.
type tensor = tensorfile.Tensor

// errRagged is what the dense output formats say about a ragged tensor.
var errRagged = errors.New("a ragged array has no dense form: convert it --to arrow or arrows")

// load reads every tensor of the file at path, memory-mapped, within the default limits: the
// tensors view the mapping until the caller releases the file.
func load(path string) (*tensorfile.File, error) {
	return tensorfile.Open(path, limits.Limits{})
}

// selectTensor returns the tensors of f, or the one named name when name is not empty.
func selectTensor(f *tensorfile.File, name string) ([]tensor, error) {
	if len(f.Tensors) == 0 {
		return nil, fmt.Errorf("%s: no tensors", f.Path)
	}
	if name == "" {
		return f.Tensors, nil
	}
	var names []string
	for _, t := range f.Tensors {
		if t.Name == name {
			return []tensor{t}, nil
		}
		names = append(names, t.Name)
	}
	return nil, fmt.Errorf("%s: no tensor %q (it holds %s)", f.Path, name, strings.Join(names, ", "))
}

// maxDenseFlag adds --max-dense, the bound on expanding a sparse tensor into its dense form.
func maxDenseFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("max-dense", limits.Default().MaxDenseElements,
		"the most elements a sparse tensor's dense form may hold (its values hashed, or written in a dense format)")
}
