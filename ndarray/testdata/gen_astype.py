# Derives astype.jsonl, AsType's reference table, from NumPy: for each pair of numeric or bool
# types, source values and what numpy's astype makes of them. Cases NumPy leaves undefined
# (NaN, infinities and out-of-range floats to integers) are left out; AsType's own rule for
# them is tested in Go. Run with /usr/bin/python3 (Debian python3-numpy).
import json, warnings
import numpy as np

warnings.simplefilter("ignore")
types = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "bool"]

def source(t):
    if t == "bool":
        return np.array([False, True])
    if t.startswith("float"):
        f = np.finfo(t)
        v = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.1, 1 / 3, 127.9, -128.9, 255.5, 300.7,
             65504.0, 65519.0, 65520.0, 1e5, 2.0 ** 31 - 0.5, 2.0 ** 53 + 1, 1e38, 3.5e38,
             6.0e-8, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14 - 2.0 ** -25,
             float(f.max), float(f.tiny), float("inf"), float("-inf"), float("nan")]
        return np.array(v, dtype=np.float64).astype(t)
    i = np.iinfo(t)
    v = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 300, -300, 32767, 32768, 65535, 65536,
         2 ** 24 + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 53 + 1, 2 ** 63 - 1, int(i.min), int(i.max)]
    return np.array([x for x in v if i.min <= x <= i.max], dtype=t)

def text(x):
    if isinstance(x, (np.floating,)):
        return float(x).hex()
    if isinstance(x, np.bool_):
        return "true" if x else "false"
    return str(int(x))

def defined(src, dst, x):
    """NumPy leaves float to integer undefined for NaN, infinities and out-of-range values."""
    if not src.startswith("float") or dst == "bool" or dst.startswith("float"):
        return True
    if not np.isfinite(x):
        return False
    i = np.iinfo(dst)
    return i.min <= np.trunc(float(x)) <= i.max

cases = []
for s in types:
    src = source(s)
    for d in types:
        keep = [x for x in src if defined(s, d, x)]
        got = np.array(keep, dtype=s).astype(d)
        cases.append({"from": s, "to": d, "in": [text(x) for x in keep], "out": [text(x) for x in got]})
with open("astype.jsonl", "w") as f:
    for c in cases:
        c["numpy"] = np.__version__
        f.write(json.dumps(c) + "\n")
