#!/usr/bin/python3
"""Times SciPy on the sparse conversions of ndarrow's sparse benchmarks, then runs those Go
benchmarks, and prints both in one table (milliseconds per operation, lower is better).

The matrix is the Go benchmark's: 4096x4096 float64 with 1% non-zeros at uniformly random
positions. Needs Debian's python3-scipy and Go; run from the repository root:

    /usr/bin/python3 bench/sparse_vs_scipy.py
"""
import re
import subprocess
import time

import numpy as np
import scipy
import scipy.sparse as sp

N = 4096


def best(fn, repeat=7):
    """Best wall time of fn in milliseconds, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def scipy_times():
    rng = np.random.default_rng(42)
    dense = np.where(rng.random((N, N)) < 0.01, rng.random((N, N)) + 1, 0.0)
    csr = sp.csr_array(dense)
    coo = csr.tocoo()  # canonical: sorted by row, then column
    perm = rng.permutation(coo.nnz)
    shuffled = sp.coo_array((coo.data[perm], (coo.row[perm], coo.col[perm])), shape=(N, N))
    rows, cols = coo.row.tolist(), coo.col.tolist()
    order = rng.permutation(coo.nnz).tolist()

    def build(seq):
        dok = sp.dok_array((N, N))
        for p in seq:
            dok[rows[p], cols[p]] = 1.0
        return dok

    ordered_dok = build(range(coo.nnz))

    def get_all():
        for p in order:
            ordered_dok[rows[p], cols[p]]

    # dok is slow: time it on a tenth of the entries and scale.
    tenth = order[: len(order) // 10]
    vec = rng.random(N)
    mat = rng.random((N, 64))
    csc, coo_ = csr.tocsc(), csr.tocoo()
    return {
        "MatMul/csr/vector": best(lambda: csr @ vec),
        "MatMul/csr/matrix64": best(lambda: csr @ mat),
        "MatMul/csc/vector": best(lambda: csc @ vec),
        "MatMul/csc/matrix64": best(lambda: csc @ mat),
        "MatMul/coo/vector": best(lambda: coo_ @ vec),
        "MatMul/coo/matrix64": best(lambda: coo_ @ mat),
        "MatMul/Rows/CSR": best(lambda: csr[1024:2048]),
        "DenseToCSR": best(lambda: sp.csr_array(dense)),
        "CSRToDense": best(lambda: csr.toarray()),
        "COOToCSR/canonical": best(lambda: coo.tocsr()),
        "COOToCSR/shuffled": best(lambda: shuffled.tocsr()),
        "COOBuild/Set/random": best(lambda: build(tenth), repeat=2) * 10,
        "COOBuild/Get/random": best(lambda: [ordered_dok[rows[p], cols[p]] for p in tenth], repeat=2) * 10,
    }, coo.nnz


def go_times():
    out = ""
    for pattern, times in [("DenseToCSR|CSRToDense|COOToCSR|COOBuild", "10x"), ("MatMul", "200x")]:
        out += subprocess.run(
            ["go", "test", "./sparse", "-run", "^$", "-bench", pattern, "-benchtime", times, "-count", "3"],
            check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        m = re.match(r"Benchmark(\S+?)(-\d+)?\s+\d+\s+(\d+) ns/op", line)
        if m:
            name, ns = m.group(1), int(m.group(3))
            times[name] = min(times.get(name, float("inf")), ns / 1e6)
    return times


def main():
    ref, nnz = scipy_times()
    ours = go_times()
    print(f"4096x4096 float64, {nnz} non-zeros; SciPy {scipy.__version__}, NumPy {np.__version__}")
    print(f"{'operation':<32}{'SciPy ms':>12}{'ndarrow ms':>12}{'speed-up':>10}")
    for name in ["DenseToCSR", "CSRToDense", "COOToCSR/canonical", "COOToCSR/shuffled", "COOBuild/Set/random", "COOBuild/Get/random",
                 "COOBuild/Set/ordered", "COOBuild/Get/ordered", "COOBuild/Set/map-baseline",
                 "MatMul/csr/vector", "MatMul/loop-baseline/CSR/vector", "MatMul/csr/matrix64", "MatMul/csc/vector",
                 "MatMul/csc/matrix64", "MatMul/coo/vector", "MatMul/coo/matrix64", "MatMul/Rows/CSR"]:
        s = ref.get(name)
        g = ours.get(name)
        sx = f"{s:12.2f}" if s is not None else f"{'-':>12}"
        ratio = f"{s / g:9.1f}x" if s is not None and g else f"{'':>10}"
        print(f"{name:<32}{sx}{g:12.4f}{ratio}")


if __name__ == "__main__":
    main()
