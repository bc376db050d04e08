# Derives products.jsonl, the reference table of sparse.MatMul, DenseMatMul, CSR.Rows,
# CSC.Cols and the transposes, from SciPy itself. Each line is a matrix (CSR parts, floats as
# float.hex), a dense operand, and what SciPy gives for a @ x (or x @ a), a[lo:hi] and a.T.
# Run with /usr/bin/python3 (Debian python3-scipy 1.10): /usr/bin/python3 gen_products.py > products.jsonl
import json
import numpy as np
import scipy
import scipy.sparse as sp

rng = np.random.default_rng(20261128)

def text(x):
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return [float(v).hex() for v in x.ravel()]
    return [str(int(v)) for v in x.ravel()]

def dense(x):
    x = np.asarray(x)
    return {"dtype": str(x.dtype), "shape": list(x.shape), "data": text(x)}

def csr(m):
    m = sp.csr_array(m)
    return {"dtype": str(m.dtype), "shape": list(m.shape), "indptr": [int(v) for v in m.indptr],
            "indices": [int(v) for v in m.indices], "data": text(m.data)}

def random_matrix(rows, cols, density, dtype):
    m = sp.random(rows, cols, density=density, format="csr", random_state=rng, dtype=np.float64)
    if np.dtype(dtype).kind in "iu":
        m.data = np.round(m.data * 20 - 10)
    return m.astype(dtype)

matrices = {
    "random 6x5": random_matrix(6, 5, 0.4, np.float64),
    "empty rows": sp.csr_array(np.array([[0, 0, 0], [1.5, 0, -2], [0, 0, 0], [0, 4, 0]])),
    "one column": random_matrix(7, 1, 0.5, np.float64),
    "one row": random_matrix(1, 9, 0.5, np.float64),
    "no values": sp.csr_array((4, 3), dtype=np.float64),
    "float32 40x30": random_matrix(40, 30, 0.1, np.float32),
    "int64 8x6": random_matrix(8, 6, 0.3, np.int64),
}
out = []
for name, m in matrices.items():
    rows, cols = m.shape
    for x in [rng.normal(size=cols), rng.normal(size=(cols, 3)), rng.normal(size=(cols, 1))]:
        x = x.astype(m.dtype) if m.dtype.kind == "f" else np.round(x * 5).astype(m.dtype)
        out.append({"op": "matmul", "name": name, "a": csr(m), "x": dense(x), "want": dense(m @ x)})
    for x in [rng.normal(size=rows), rng.normal(size=(2, rows))]:
        x = x.astype(m.dtype) if m.dtype.kind == "f" else np.round(x * 5).astype(m.dtype)
        out.append({"op": "densematmul", "name": name, "a": csr(m), "x": dense(x), "want": dense(x @ m)})
    for lo, hi in [(0, rows), (0, 0), (rows // 2, rows), (min(1, rows), max(rows - 1, min(1, rows)))]:
        out.append({"op": "rows", "name": name, "a": csr(m), "lo": lo, "hi": hi, "want": csr(m[lo:hi])})
    for lo, hi in [(0, cols), (cols // 2, cols)]:
        out.append({"op": "cols", "name": name, "a": csr(m), "lo": lo, "hi": hi, "want": dense(sp.csc_array(m)[:, lo:hi].toarray())})
    out.append({"op": "transpose", "name": name, "a": csr(m), "want": dense(m.T.toarray())})
for c in out:
    c["scipy"] = scipy.__version__
print("\n".join(json.dumps(c) for c in out))
