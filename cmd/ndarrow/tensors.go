package main

import (
	"errors"

	"github.com/ndarrow/ndarrow/ipc/tensorfile"
)

// tensor is one tensor found in an input file.
type tensor = tensorfile.Tensor

// errRagged is what the dense output formats say about a ragged tensor.
var errRagged = errors.New("a ragged array has no dense form: convert it --to arrow or arrows")

// load reads every tensor of the file at path, memory-mapped: the tensors view the mapping,
// which stays for the life of the process.
func load(path string) ([]tensor, error) {
	f, err := tensorfile.Open(path)
	if err != nil {
		return nil, err
	}
	return f.Tensors, nil
}
