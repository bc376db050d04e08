# Writes .npz archives with numpy.savez and numpy.savez_compressed, and expected.jsonl: for
# each member, what a correct reader recovers (dtype, shape, sha256 of the values in C order,
# little-endian). Run with /usr/bin/python3 (Debian python3-numpy).
import hashlib, json
import numpy as np

rng = np.random.default_rng(7)
arrays = {
    "images": rng.random((4, 3, 2), dtype=np.float32),
    "ids": np.arange(10, dtype=np.int64) * 7 - 20,
    "mask": np.array([[True, False, True], [False, False, True]]),
    "half": np.array([0.1, -2.5, 65504, 6e-8], dtype=np.float16),
    "fortran": np.asfortranarray(np.arange(15, dtype=np.float64).reshape(3, 5)),
    "bigendian": np.arange(6, dtype=">u4").reshape(2, 3),
    "scalar": np.array(3.25, dtype=np.float64),
    "empty": np.zeros((0, 4), dtype=np.int16),
}

def line(archive, name, a):
    c = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
    return {"archive": archive, "name": name, "dtype": str(a.dtype.newbyteorder("=")) if a.dtype.kind != "b" else "bool",
            "shape": list(a.shape), "sha256": hashlib.sha256(c.tobytes()).hexdigest()}

out = []
np.savez("savez.npz", **arrays)
out += [line("savez.npz", k, v) for k, v in arrays.items()]
np.savez_compressed("savez_compressed.npz", **arrays)
out += [line("savez_compressed.npz", k, v) for k, v in arrays.items()]
positional = [np.arange(3, dtype=np.uint8), np.eye(2, dtype=np.float32)]
np.savez("positional.npz", *positional)
out += [line("positional.npz", "arr_%d" % i, v) for i, v in enumerate(positional)]
with open("expected.jsonl", "w") as f:
    for o in out:
        f.write(json.dumps(o, sort_keys=True) + "\n")
