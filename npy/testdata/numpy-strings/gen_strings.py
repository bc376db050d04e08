# Writes NumPy string arrays as numpy.save writes them, and expected.json with their values:
# bytes (|S: NUL-padded), text (<U: UCS-4) in both byte orders, a 0-d bytes array (what
# scipy.sparse.save_npz stores as its format member), and a Fortran-order one.
# Run here with /usr/bin/python3 (Debian python3-numpy 1.24): /usr/bin/python3 gen_strings.py
import json
import numpy as np

arrays = {
    "bytes_S3.npy": np.array([b"csr", b"ab", b""]),
    "text_U5.npy": np.array(["h\u00e9llo", "x", "\u00fc\u20ac\U0001F600"]),
    "text_bigendian.npy": np.array(["ab", "c"], dtype=">U2"),
    "scalar_S3.npy": np.array(b"csr"),
    "text_fortran.npy": np.asfortranarray(np.array([["a", "bb"], ["ccc", "d"]])),
}
expected = {}
for name, a in arrays.items():
    np.save(name, a)
    expected[name] = {"descr": a.dtype.str, "shape": list(a.shape), "fortran": bool(np.isfortran(a) and a.ndim > 1),
                      "values": [v.decode("latin-1") if isinstance(v, bytes) else v for v in a.ravel(order="C").tolist()]}
with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, ensure_ascii=False)
    f.write("\n")
