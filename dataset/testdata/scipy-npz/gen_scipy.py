#!/usr/bin/python3
"""Writes the sparse matrices of TestSciPyFiles with scipy.sparse.save_npz (SciPy 1.10, NumPy
1.24: Debian's python3-scipy), and expected.json: for each file what load_npz reads of it —
its format, shape, dtype, stored arrays in storage order and dense values — or, for a file
ndarrow refuses, the error it must name.

Run from this directory: /usr/bin/python3 gen_scipy.py
"""
import json
import numpy as np
import scipy
import scipy.sparse as sp

rng = np.random.default_rng(39)


def random(rows, cols, density, dtype, fmt):
    m = sp.random(rows, cols, density=density, format="coo", random_state=rng, dtype=np.float64)
    m.data = (m.data * 200 - 100)
    if np.dtype(dtype).kind in "iu":
        m.data = np.where(m.data == 0, 1, m.data)
    if np.dtype(dtype).kind == "u":
        m.data = np.abs(m.data)
    m = m.astype(dtype)
    return m.asformat(fmt)


def stored(name, m):
    """The archive's arrays as save_npz stored them (load_npz may narrow the indices) — of a
    matrix that stores a coordinate twice, as sum_duplicates() leaves them: the matrix SciPy
    means, which ndarrow reads."""
    z = dict(np.load(name + ".npz"))
    out = {}
    if duplicates(m):
        m = m.copy()
        m.sum_duplicates()
        out["summed"] = True
        if m.format == "coo":  # SciPy's summed COO goes by column; ndarrow's (Arrow's canonical) by row
            order = np.lexsort((m.col, m.row))
            m = sp.coo_matrix((m.data[order], (m.row[order], m.col[order])), shape=m.shape)
            z["row"], z["col"] = m.row.astype(z["row"].dtype), m.col.astype(z["col"].dtype)
        else:
            z["indices"], z["indptr"] = m.indices.astype(z["indices"].dtype), m.indptr.astype(z["indptr"].dtype)
        z["data"] = m.data
    out["data"] = plain(z["data"])
    for k in ("indices", "indptr", "row", "col"):
        if k in z:
            out[k] = z[k].tolist()
            out["index_dtype"] = str(z[k].dtype)
    return out


def duplicates(m):
    c = m.tocoo()
    return len(set(zip(c.row.tolist(), c.col.tolist()))) != c.nnz


def plain(a):
    if a.dtype == np.bool_:
        return a.tolist()
    return [float(x) if a.dtype.kind == "f" else int(x) for x in a]


cases = {}


def save(name, m, compressed=True, why=None):
    sp.save_npz(name + ".npz", m, compressed=compressed)
    back = sp.load_npz(name + ".npz")
    case = {"format": back.format, "shape": list(back.shape), "dtype": str(back.dtype),
            "compressed": compressed}
    if why:
        case["error"] = why
    else:
        case.update(stored(name, back))
        case["dense"] = plain(back.toarray().ravel())
    cases[name] = case


# Each format, compressed (save_npz's default) and stored, across the dtypes SciPy holds.
save("csr_float64", random(7, 5, 0.3, np.float64, "csr"))
save("csr_float32_stored", random(6, 9, 0.25, np.float32, "csr"), compressed=False)
save("csc_int32", random(8, 4, 0.4, np.int32, "csc"))
save("csc_uint64_stored", random(3, 11, 0.3, np.uint64, "csc"), compressed=False)
save("coo_int8", random(5, 5, 0.3, np.int8, "coo"))
save("coo_float64_stored", random(4, 6, 0.5, np.float64, "coo"), compressed=False)
save("csr_bool", random(6, 6, 0.3, np.float64, "csr").astype(np.bool_))
save("csr_int16", random(4, 7, 0.3, np.int16, "csr"))
save("csc_uint8", random(9, 3, 0.3, np.uint8, "csc"))

# Edge matrices: empty rows and columns, one column, one row, nothing stored, 0x0.
edge = sp.csr_matrix(np.array([[0, 0, 0], [1.5, 0, -2], [0, 0, 0], [0, 0, 4]]))
save("csr_empty_rows", edge)
save("csc_one_column", sp.csc_matrix(np.array([[1.0], [0], [3], [0]])))
save("csr_one_row", sp.csr_matrix(np.array([[0, 2, 0, 0, 5]], dtype=np.int64)))
save("csr_nothing_stored", sp.csr_matrix((5, 4), dtype=np.float64))
save("coo_0x0", sp.coo_matrix((0, 0), dtype=np.float32))

# What SciPy keeps as it was given: duplicates and unsorted indices (not canonical), and
# 64-bit indices (SciPy chooses them for large matrices; here forced).
dup = sp.coo_matrix((np.array([1.0, 2, 3, 4]), (np.array([2, 0, 2, 1]), np.array([1, 3, 1, 0]))), shape=(3, 4))
save("coo_duplicates", dup)
unsorted = sp.csr_matrix((np.array([3.0, 1, 2]), np.array([2, 0, 1]), np.array([0, 3, 3])), shape=(2, 3))
assert not unsorted.has_sorted_indices
save("csr_unsorted_indices", unsorted)
twice = sp.csr_matrix((np.array([1, 2, 3, 4, 5], dtype=np.int32), np.array([2, 0, 2, 1, 1]), np.array([0, 3, 3, 5])), shape=(3, 3))
save("csr_duplicates", twice)
save("csc_bool_duplicates", sp.csc_matrix((np.array([True, True, False]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2)))
wide = random(6, 5, 0.4, np.float64, "csr")
wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
save("csr_int64_indices", wide)

# Formats ndarrow does not read: it names them.
save("bsr_float64", sp.bsr_matrix(np.arange(16, dtype=np.float64).reshape(4, 4), blocksize=(2, 2)),
     why="scipy.sparse format ndarrow does not read")
save("dia_float64", sp.dia_matrix(np.eye(4)), why="scipy.sparse format ndarrow does not read")
save("csr_complex128", random(3, 3, 0.5, np.complex128, "csr"), why='descr "<c16": unsupported .npy file')

with open("expected.json", "w") as f:
    f.write('{"scipy": %s, "numpy": %s, "cases": {\n' % (json.dumps(scipy.__version__), json.dumps(np.__version__)))
    f.write(",\n".join("%s: %s" % (json.dumps(k), json.dumps(v, sort_keys=True)) for k, v in sorted(cases.items())))
    f.write("\n}}\n")
