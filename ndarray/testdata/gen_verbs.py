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

print("\n".join(json.dumps(c) for c in out))

