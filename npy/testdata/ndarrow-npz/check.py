# Loads the archives ndarrow's NpzWriter wrote (go test ./npy -update-npz) with
# numpy.load and writes numpy-read.jsonl: for each member, in the archive's order, the dtype,
# shape and sha256 of the values in C order, little-endian, as NumPy read them.
# Run with /usr/bin/python3 (Debian python3-numpy) in this directory.
import hashlib, json, zipfile
import numpy as np

with open("numpy-read.jsonl", "w") as out:
    for archive in ["written.npz", "written_compressed.npz"]:
        order = [i.filename[:-4] for i in zipfile.ZipFile(archive).infolist()]
        with np.load(archive) as z:
            assert sorted(z.files) == sorted(order), (z.files, order)
            for name in order:
                a = z[name]
                c = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
                dtype = "bool" if a.dtype.kind == "b" else str(a.dtype)
                out.write(json.dumps({"archive": archive, "name": name, "dtype": dtype, "shape": list(a.shape),
                                      "sha256": hashlib.sha256(c.tobytes()).hexdigest()}, sort_keys=True) + "\n")
