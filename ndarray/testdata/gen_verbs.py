# Derives verbs.jsonl, the reference table of ndarray's NumPy verbs (reductions, broadcasting
# arithmetic, constructors, allclose, checked casts), from NumPy itself. Each line is one case:
# the operation, its operands (dtype, shape, row-major values as text: floats as float.hex,
# so NaN and infinities survive JSON), the view taken of the first operand ("T": transposed,
# "step2": every other element of the last axis) and what NumPy gives. Run with
# /usr/bin/python3 (Debian python3-numpy): /usr/bin/python3 gen_verbs.py > verbs.jsonl
import json, warnings
import numpy as np

warnings.simplefilter("ignore")
rng = np.random.default_rng(20261125)

def text(x):
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return [float(v).hex() for v in x.ravel()]
    return [str(int(v)) for v in x.ravel()]

def operand(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": text(a)}

def view(a, v):
    if v == "T":
        return a.T
    if v == "step2":
        return a[..., ::2]
    return a

out = []
def case(op, a, b=None, view_=None, axis=None, want=None, **kw):
    c = {"op": op, "a": operand(a), "view": view_ or ""}
    if b is not None:
        c["b"] = operand(b)
    if axis is not None:
        c["axis"] = axis
    c.update(kw)
    c["want"] = operand(want)
    c["numpy"] = np.__version__
    out.append(c)

arrays = {
    "float64 3x4": rng.normal(size=(3, 4)),
    "float32 2x3x4": rng.normal(size=(2, 3, 4)).astype(np.float32),
    "float32 1000": (rng.normal(size=1000) * 1000).astype(np.float32),
    "int32 4x5": rng.integers(-1000, 1000, size=(4, 5)).astype(np.int32),
    "uint8 3x6": rng.integers(0, 40, size=(3, 6)).astype(np.uint8),
    "float64 nan": np.array([[1.0, np.nan, -3.0], [2.0, 5.0, np.nan]]),
    "float64 ties": np.array([[3.0, 1.0, 1.0, 3.0], [0.0, 0.0, -1.0, -1.0]]),
}
for name, a in arrays.items():
    for v in ["", "T", "step2"]:
        x = view(a, v)
        if x.size == 0:
            continue
        int_small = a.dtype.kind in "iu"
        for op, f in [("sum", np.sum), ("mean", np.mean), ("min", np.min), ("max", np.max),
                      ("argmin", np.argmin), ("argmax", np.argmax)]:
            r = f(x)
            if op == "sum" and int_small:
                r = r.astype(a.dtype)  # ndarray adds in T
            case(op, a, view_=v, want=r)
            for axis in range(-1, x.ndim):
                r = f(x, axis=axis)
                if op == "sum" and int_small:
                    r = r.astype(a.dtype)
                case(op, a, view_=v, axis=axis, want=r)

pairs = [
    (rng.normal(size=(3, 4)), rng.normal(size=(4,))),
    (rng.normal(size=(3, 1)), rng.normal(size=(1, 4))),
    (rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(3, 1)).astype(np.float32)),
    (rng.integers(-50, 50, size=(2, 5)).astype(np.int64), rng.integers(1, 9, size=(5,)).astype(np.int64)),
    (np.array([[np.inf, 1.0], [np.nan, -2.0]]), np.array([2.0, 0.0])),
]
for a, b in pairs:
    for op, f in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)]:
        case(op, a, b, want=f(a, b))
    if a.dtype.kind == "f":
        case("div", a, b, want=np.divide(a, b))
    else:
        case("div", a, b, want=(np.trunc(a / b)).astype(a.dtype))  # Go's integer division

for start, stop, num, endpoint in [(0.0, 1.0, 5, True), (0.0, 1.0, 5, False), (-3.0, 7.5, 11, True),
                                   (1.0, 1.0, 3, True), (2.0, 3.0, 1, True), (0.0, 10.0, 0, True),
                                   (10.0, -10.0, 7, False)]:
    case("linspace", np.array([start, stop]), want=np.linspace(start, stop, num, endpoint=endpoint),
         num=num, endpoint=endpoint)
for n in [0, 1, 4]:
    case("eye", np.array([n], dtype=np.int64), want=np.eye(n))

for a, b, rtol, atol in [
    (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), 1e-5, 1e-8),
    (np.array([1.0, 2.0]), np.array([1.0, 2.1]), 1e-5, 1e-8),
    (np.array([1e10, 1e-7]), np.array([1.00001e10, 1e-8]), 1e-5, 1e-8),
    (np.array([np.inf, 1.0]), np.array([np.inf, 1.0]), 1e-5, 1e-8),
    (np.array([np.nan]), np.array([np.nan]), 1e-5, 1e-8),
    (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 2.0]), 0.5, 0.0),
    (np.array([100.0]), np.array([101.0]), 0.0, 1.0),
]:
    case("allclose", a, b, want=np.array([int(np.allclose(a, b, rtol=rtol, atol=atol))], dtype=np.int64),
         rtol=rtol, atol=atol)

# Variances and standard deviations: every element and along each axis, ddof 0, 1 and one
# past the axis's length (NumPy's inf or nan), of each array and view; in float64, as ndarray
# computes them.
for name, a in arrays.items():
    for v in ["", "T", "step2"]:
        x = view(a, v)
        for ddof in [0, 1]:
            for op, f in [("var", np.var), ("std", np.std)]:
                case(op, a, view_=v, want=f(x.astype(np.float64), ddof=ddof), ddof=ddof)
                for axis in range(-1, x.ndim):
                    case(op, a, view_=v, axis=axis, want=f(x.astype(np.float64), axis=axis, ddof=ddof), ddof=ddof)
        case("var", a, view_=v, axis=0, want=np.var(x.astype(np.float64), axis=0, ddof=x.shape[0]), ddof=x.shape[0])
case("var", np.array([3.0, 3.0]), want=np.var(np.array([3.0, 3.0]), ddof=2), ddof=2)

# Matrix products: matrices, vectors on either side, stacks broadcast, transposed and strided
# views, an empty inner dimension; float64, float32 (NumPy's float32 matmul: BLAS sgemm),
# integers (wrapping as Go's do: NumPy's int64 matmul).
mm = [
    ("", rng.normal(size=(3, 4)), rng.normal(size=(4, 5))),
    ("", rng.normal(size=(4,)), rng.normal(size=(4, 3))),
    ("", rng.normal(size=(3, 4)), rng.normal(size=(4,))),
    ("", rng.normal(size=(6,)), rng.normal(size=(6,))),
    ("", rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 2))),
    ("", rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(5, 4, 3))),
    ("T", rng.normal(size=(4, 3)), rng.normal(size=(4, 5))),
    ("step2", rng.normal(size=(3, 8)), rng.normal(size=(4, 2))),
    ("", rng.normal(size=(3, 0)), rng.normal(size=(0, 2))),
    ("T", rng.normal(size=(20, 7)).astype(np.float32), rng.normal(size=(20, 9)).astype(np.float32)),
    ("", rng.integers(-9, 9, size=(3, 5)).astype(np.int64), rng.integers(-9, 9, size=(5, 2)).astype(np.int64)),
    ("", rng.integers(-9, 9, size=(2, 3, 4)).astype(np.int32), rng.integers(-9, 9, size=(4,)).astype(np.int32)),
]
for v, a, b in mm:
    case("matmul", a, b, view_=v, want=np.matmul(view(a, v), b))
    if view(a, v).ndim <= 2 and b.ndim <= 2:
        case("dot", a, b, view_=v, want=np.dot(view(a, v), b))

# Larger than the kernel's blocks (256 rows of b, 128 columns): operands made by a formula
# the test makes them by too, element (i, j) ((7i + 3j) mod 11 - 5) / 4, so that only the
# product is stored.
def formula(rows, cols, dtype):
    i, j = np.indices((rows, cols))
    return (((7 * i + 3 * j) % 11 - 5) / 4).astype(dtype)
for m, k, n, dtype in [(5, 300, 140, np.float32), (4, 260, 131, np.float64), (3, 270, 129, np.int64)]:
    a, b = formula(m, k, dtype), formula(k, n, dtype)
    if dtype == np.int64:
        a, b = (((7 * np.indices((m, k))[0] + 3 * np.indices((m, k))[1]) % 11) - 5).astype(dtype), \
               (((7 * np.indices((k, n))[0] + 3 * np.indices((k, n))[1]) % 11) - 5).astype(dtype)
    c = {"op": "matmul", "a": {"dtype": np.dtype(dtype).name, "shape": [m, k], "data": []},
         "b": {"dtype": np.dtype(dtype).name, "shape": [k, n], "data": []}, "view": "", "formula": "mod11",
         "want": operand(np.matmul(a, b)), "numpy": np.__version__}
    out.append(c)

print("\n".join(json.dumps(c) for c in out))

