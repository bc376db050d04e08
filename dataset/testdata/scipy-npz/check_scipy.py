#!/usr/bin/python3
"""Loads every archive ndarrow wrote (ndarrow/*.npz: go test ./dataset -run TestSciPyWrittenBack
-update-scipy) with scipy.sparse.load_npz and writes scipy-read.jsonl: for each, the class
load_npz made, its shape, dtype, stored entries and the sha256 of its dense values in C order
(duplicates summed, as SciPy sums them; built with np.add.at, which every dtype takes).

Run from this directory: /usr/bin/python3 check_scipy.py
"""
import glob
import hashlib
import json
import os

import numpy as np
import scipy
import scipy.sparse as sp

with open("scipy-read.jsonl", "w") as out:
    for path in sorted(glob.glob("ndarrow/*.npz")):
        m = sp.load_npz(path)
        c = m.tocoo()
        dense = np.zeros(m.shape, dtype=m.dtype)
        if dense.dtype == np.bool_:
            dense[c.row, c.col] |= c.data
        else:
            np.add.at(dense, (c.row, c.col), c.data)
        out.write(json.dumps({"file": os.path.basename(path), "scipy": scipy.__version__, "format": m.format,
                              "shape": list(m.shape), "dtype": str(m.dtype), "nnz": int(m.nnz),
                              "sha256": hashlib.sha256(np.ascontiguousarray(dense).tobytes()).hexdigest()},
                             sort_keys=True) + "\n")
