#!/bin/sh
# Reads every SparseTensor message ndarrow made of a SciPy archive (ndarrow/*.tensor: go test
# ./dataset -run TestSciPyWrittenBack -update-scipy) with Arrow C++ 17's reader and writes
# arrow-cpp-read.jsonl: for each file, what `golden read` printed (kind, dtype, shape, nnz)
# and the sha256 of the dense values it dumped.
#
# Run from this directory, with B the bin directory of ../shared/reference/arrow-cpp-17:
#   B=../../../../shared/reference/arrow-cpp-17/bin sh check_arrow_cpp.sh
set -eu
: "${B:?set B to Arrow C++ 17's bin directory}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > arrow-cpp-read.jsonl
for f in ndarrow/*.tensor; do
	rm -f "$tmp"/*
	line=$("$B/golden" read "$f" "$tmp")
	sum=$(sha256sum "$tmp/msg0.bin" | cut -d' ' -f1)
	printf '{"file":"%s","sha256":"%s",%s\n' "$(basename "$f")" "$sum" "${line#\{}" >> arrow-cpp-read.jsonl
done
