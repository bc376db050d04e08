"""From PyTorch: what ndarrow writes, into torch tensors and DataLoaders — run and checked.

    go build -o /tmp/ndarrow ./cmd/ndarrow
    /usr/bin/python3 examples/torch/recipe.py /tmp/ndarrow

Needs NumPy, SciPy and PyTorch (Debian: python3-numpy python3-scipy python3-torch) and, where
pyarrow is missing (Debian has no package of it), grpcio (python3-grpcio), over which
../trainers/ndarrow_flight then reads the Flight stream itself. In a temporary
directory it has ndarrow write a Parquet table and .npy/.npz files, then shows and checks:

  a. a memory-mapped .npy into torch without a copy (mmap_mode "c" and "r");
  b. DLPack both ways;
  c. sparse matrices (CSR, CSC, COO) ndarrow wrote as SciPy's .npz into torch sparse tensors;
  d. a Dataset over per-column .npy files, memory-mapped, in a shuffling DataLoader of two
     workers;
  e. a DataLoader over `ndarrow serve`'s mini-batches (ndarrow_flight.TorchBatches).

It prints one line per check and exits 1 at the first that fails, 77 when a module it needs
is missing. CI runs it (cmd/ndarrow TestPythonExamples).
"""

import os
import pickle
import socket
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "..", "ipc", "testdata", "arrow-cpp-17")
MISSING = 77  # the exit status saying a module it needs is missing (cmd/ndarrow TestPythonExamples)

try:
    import numpy as np
    import scipy
    import scipy.sparse as sp
    import torch
    from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

    sys.path.insert(0, os.path.join(HERE, "..", "trainers"))
    import ndarrow_flight as nf

    FLIGHT = nf.Client("grpc://127.0.0.1:1").transport  # pyarrow where it is installed, else grpcio
except ImportError as e:
    print(f"recipe.py: {e} (Debian: apt-get install python3-numpy python3-scipy python3-torch python3-grpcio)", file=sys.stderr)
    sys.exit(MISSING)

ROWS, WIDTH = 8192, 256  # emb float32 [ROWS, WIDTH] (8 MiB), label int64 [ROWS]


def ok(what, cond):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def expected_emb(labels):
    """Row r of emb holds r + j/WIDTH in column j (exact in float32)."""
    labels = np.asarray(labels, dtype=np.int64)
    return (labels[:, None] + np.arange(WIDTH) / WIDTH).astype(np.float32)


def ptr(a):
    return a.__array_interface__["data"][0]


def mapping_of(address):
    """The line of /proc/self/maps holding address: (start, end, file offset, path)."""
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return start, end, int(fields[2], 16), fields[5].strip() if len(fields) > 5 else ""
    return None


def npy_header_len(path):
    """Bytes before a .npy file's data: magic, version, header length, header."""
    with open(path, "rb") as f:
        head = f.read(12)
    if head[6] == 1:
        return 10 + int.from_bytes(head[8:10], "little")
    return 12 + int.from_bytes(head[8:12], "little")


class NpyRows(Dataset):
    """Rows of per-column .npy files ({name: path}), memory-mapped in each process that reads.

    The maps are opened at the first __getitem__ and left out of the pickle, so that a
    DataLoader worker (fork or spawn) maps the files itself instead of receiving a copy.
    ds[i] is row i ({name: tensor}); ds[[i, j, ...]] those rows at once (a BatchSampler as
    the DataLoader's sampler, batch_size=None): one fancy index of each map.
    """

    def __init__(self, paths):
        self.paths, self.maps = dict(paths), None
        self.rows = len(np.load(next(iter(self.paths.values())), mmap_mode="r"))

    def __getstate__(self):
        return {**self.__dict__, "maps": None}

    def open(self):
        if self.maps is None:
            self.maps = {k: np.load(p, mmap_mode="r") for k, p in self.paths.items()}
        return self.maps

    def __len__(self):
        return self.rows

    def __getitem__(self, i):
        rows = i if isinstance(i, int) else np.asarray(i)
        # a[rows]: a view of the map (one row) or a gather (several); np.array copies it
        # into writable memory, so torch does not warn and nothing aliases the file.
        return {k: torch.from_numpy(np.array(a[rows])) for k, a in self.open().items()}


def epoch_of(loader):
    labels, good = [], True
    for batch in loader:
        labels.append(batch["label"])
        good &= batch["emb"].dtype == torch.float32 and batch["label"].dtype == torch.int64
        good &= np.array_equal(batch["emb"].numpy(), expected_emb(batch["label"].numpy()))
    return torch.cat(labels).numpy(), len(labels), good


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ndarrow = sys.argv[1] if len(sys.argv) > 1 else "ndarrow"

    def run(*args):
        """Run ndarrow, print the command (paths relative to the temporary directory)."""
        print("$ ndarrow " + " ".join(os.path.relpath(a, tmp) if a.startswith(tmp) else
                                      os.path.basename(a) if a.startswith(GOLDEN) else a
                                      for a in args), flush=True)
        r = subprocess.run([ndarrow, *args], capture_output=True, text=True)
        if r.returncode != 0 or r.stderr:
            print(r.stderr, end="")
        ok(f"ndarrow {args[0]} exit {r.returncode}", r.returncode == 0)

    print(f"torch {torch.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"Python {sys.version.split()[0]}, Flight client: {FLIGHT}")
    with tempfile.TemporaryDirectory() as tmp:
        src, served = os.path.join(tmp, "src"), os.path.join(tmp, "served")
        os.makedirs(src)
        os.makedirs(served)
        rows = np.arange(ROWS, dtype=np.int64)
        np.save(os.path.join(src, "emb.npy"), expected_emb(rows))
        np.save(os.path.join(src, "label.npy"), rows)
        table = os.path.join(served, "t.parquet")
        emb_npy, label_npy = os.path.join(tmp, "emb.npy"), os.path.join(tmp, "label.npy")

        print("\n# The table, as a trainer gets it: Parquet; then one .npy per column")
        run("convert", src, table)
        run("convert", "--tensor", "t.emb", table, emb_npy)
        run("convert", "--tensor", "t.label", table, label_npy)
        ok(f"emb.npy {os.path.getsize(emb_npy)} bytes: {npy_header_len(emb_npy)}-byte header "
           f"+ {ROWS}x{WIDTH} float32", os.path.getsize(emb_npy) == npy_header_len(emb_npy) + ROWS * WIDTH * 4)

        # ---- a. a memory-mapped .npy into torch, no copy --------------------------------------
        print("\n# a. np.load(mmap_mode=...) -> torch.from_numpy: no copy")
        # mode "c" first: torch's read-only warning is given once per process, so checking
        # that "c" gives none must come before "r" gives it.
        c = np.load(emb_npy, mmap_mode="c")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tc = torch.from_numpy(c)
        ok(f"mode 'c' (copy-on-write, private): writable={c.flags.writeable}, "
           f"torch.from_numpy gives {len(w)} warnings, data_ptr == __array_interface__ data",
           c.flags.writeable and not w and tc.data_ptr() == ptr(c))

        r = np.load(emb_npy, mmap_mode="r")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tr = torch.from_numpy(r)
        msgs = [str(x.message).split(",")[0] for x in w if issubclass(x.category, UserWarning)]
        ok(f"mode 'r' (read-only): writable={r.flags.writeable}, torch warns: {msgs[0] if msgs else None!r}",
           not r.flags.writeable and len(msgs) == 1 and "not writable" in msgs[0])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            torch.from_numpy(np.load(label_npy, mmap_mode="r"))
        ok(f"once per process: another read-only array gives {len(w)} warnings", not w)

        m = mapping_of(tr.data_ptr())
        header = npy_header_len(emb_npy)
        ok(f"mode 'r': data_ptr == __array_interface__ data, inside the mapping of emb.npy "
           f"at file offset {tr.data_ptr() - m[0] + m[2]} (the header's length {header})",
           tr.data_ptr() == ptr(r) and m is not None and m[3] == os.path.realpath(emb_npy)
           and tr.data_ptr() - m[0] + m[2] == header)
        mc = mapping_of(tc.data_ptr())
        ok("mode 'c': inside a mapping of emb.npy too, at the same file offset",
           mc is not None and mc[3] == os.path.realpath(emb_npy) and tc.data_ptr() - mc[0] + mc[2] == header)
        ok(f"64-byte aligned: header {header} bytes = {header // 64}x64, "
           f"data_ptr % 64 == {tr.data_ptr() % 64} ('r'), {tc.data_ptr() % 64} ('c')",
           header % 64 == 0 and tr.data_ptr() % 64 == 0 and tc.data_ptr() % 64 == 0)
        ok(f"values: tensor {tuple(tr.shape)} {tr.dtype} == the rows written",
           torch.equal(tr, torch.from_numpy(expected_emb(rows))) and torch.equal(tc, tr))

        tc[0, 0] = -1.0
        with open(emb_npy, "rb") as f:
            f.seek(header)
            on_disk = np.frombuffer(f.read(4), "<f4")[0]
        ok(f"mode 'c': tc[0, 0] = -1 shows in the NumPy array ({c[0, 0]}), not in the file "
           f"({on_disk}) nor in the 'r' map ({r[0, 0]})", c[0, 0] == -1 and on_disk == 0 and r[0, 0] == 0)
        del tc, c, tr, r

        # ---- b. DLPack ------------------------------------------------------------------------
        print("\n# b. DLPack: torch.from_dlpack, torch.utils.dlpack.from_dlpack, and back")
        r = np.load(emb_npy, mmap_mode="r")
        try:
            torch.from_dlpack(r)
            refused = None
        except BufferError as e:
            refused = str(e)
        ok(f"torch.from_dlpack(mode 'r' map) refused by NumPy: BufferError {refused!r}", refused is not None)

        c = np.load(emb_npy, mmap_mode="c")
        t1 = torch.from_dlpack(c)
        t2 = torch.utils.dlpack.from_dlpack(c.__dlpack__())
        ok(f"torch.from_dlpack(mode 'c' map) and torch.utils.dlpack.from_dlpack(a.__dlpack__()): "
           f"{tuple(t1.shape)} {t1.dtype}, data_ptr == the map's for both",
           t1.data_ptr() == ptr(c) == t2.data_ptr() and torch.equal(t1, torch.from_numpy(expected_emb(rows))))
        n1, n2 = t1.numpy(), np.from_dlpack(t1)
        ok("back: tensor.numpy() and np.from_dlpack(tensor) share the tensor's memory",
           ptr(n1) == t1.data_ptr() == ptr(n2) and np.shares_memory(n1, c))
        n1[1, 1] = 42.0
        ok(f"a write through tensor.numpy() shows in the tensor and the map: t[1, 1] = {t2[1, 1].item()}, "
           f"a[1, 1] = {c[1, 1]}", t2[1, 1].item() == 42.0 and c[1, 1] == 42.0)
        del t1, t2, n1, n2, c, r

        # ---- c. SciPy sparse ------------------------------------------------------------------
        print("\n# c. sparse matrices: ndarrow convert X.tensor m.npz -> scipy.sparse.load_npz -> torch")
        for name, fmt in (("csr_double_5x7_i64", "csr"), ("csc_double_5x7_i64", "csc"), ("coo_double_4x6_i64", "coo")):
            npz = os.path.join(tmp, f"{fmt}.npz")
            run("convert", os.path.join(GOLDEN, name + ".tensor"), npz)
            golden = np.fromfile(os.path.join(GOLDEN, name + ".bin"), "<f8")  # Arrow C++'s dense form
            m = sp.load_npz(npz)
            ours = np.load(npz)
            theirs_path = os.path.join(tmp, f"scipy-{fmt}.npz")
            sp.save_npz(theirs_path, m, compressed=False)
            theirs = np.load(theirs_path)
            ok(f"{fmt}.npz members {ours.files}, format {ours['format']}: those scipy.sparse.save_npz writes",
               ours.files == theirs.files and ours["format"] == theirs["format"]
               and np.array_equal(ours["shape"], theirs["shape"]))
            dense = m.toarray()
            idx = "row" if fmt == "coo" else "indices"
            ok(f"load_npz: {type(m).__name__} {m.shape} nnz {m.nnz} ({idx} {ours[idx].dtype} in the file, "
               f"{getattr(m, idx).dtype} once loaded), toarray() == Arrow C++'s dense form",
               np.array_equal(dense, golden.reshape(dense.shape)))
            if fmt in ("csr", "csc"):
                make = torch.sparse_csr_tensor if fmt == "csr" else torch.sparse_csc_tensor
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    s = make(torch.from_numpy(m.indptr), torch.from_numpy(m.indices), torch.from_numpy(m.data),
                             size=m.shape)
                beta = [str(x.message).split(".")[0] for x in w]
                inner = s.col_indices() if fmt == "csr" else s.row_indices()
                ok(f"torch.sparse_{fmt}_tensor(indptr, indices, data) ({beta[0] if beta else 'no warning'}): "
                   f"values and {'col' if fmt == 'csr' else 'row'}_indices view SciPy's arrays",
                   s.values().data_ptr() == ptr(m.data) and inner.data_ptr() == ptr(m.indices))
            else:
                idx = torch.from_numpy(np.vstack([m.row, m.col]).astype(np.int64))  # a copy: int64, [2, nnz]
                s = torch.sparse_coo_tensor(idx, torch.from_numpy(m.data), m.shape)
            ok(f"{s.layout}: to_dense() == toarray(), {s.to_dense().dtype}",
               torch.equal(s.to_dense(), torch.from_numpy(dense)))

        # ---- d. a DataLoader over per-column .npy files ---------------------------------------
        print("\n# d. a Dataset over emb.npy and label.npy, memory-mapped; DataLoader(shuffle=True, num_workers=2)")
        npz = os.path.join(tmp, "t.npz")
        run("convert", table, npz)
        with np.load(npz, mmap_mode="r") as z:  # mmap_mode is ignored for an .npz archive
            members, member = z.files, z["emb"]
        ok(f"t.npz members {members}, but np.load(t.npz, mmap_mode='r')['emb'] is an {type(member).__name__} "
           f"in memory (owns its data: {member.flags.owndata}): per-column .npy files are the route to mmap",
           members == ["emb", "label"] and not isinstance(member, np.memmap) and member.flags.owndata
           and np.array_equal(member, expected_emb(rows)))
        ds = NpyRows({"emb": emb_npy, "label": label_npy})
        probe = [5, 1000, 2001, 3333, 4096, 5000, 6789, ROWS - 1]
        items = [ds[i] for i in probe]
        emb_map = ds.open()["emb"]
        m = mapping_of(ptr(emb_map))
        offsets = [ptr(emb_map[i]) - m[0] + m[2] for i in probe]
        ok(f"ds[i] copies row i out of the map of emb.npy (its tensor does not share the map's memory): emb_map[i] a view at file offset "
           f"{header} + i*{WIDTH * 4} (row {probe[1]}: {offsets[1]}), label and emb right for {len(probe)} rows",
           m[3] == os.path.realpath(emb_npy) and all(np.shares_memory(emb_map[i], emb_map) for i in probe)
           and not any(np.shares_memory(it["emb"].numpy(), emb_map) for it in items)
           and offsets == [header + i * WIDTH * 4 for i in probe]
           and all(int(it["label"]) == i and np.array_equal(it["emb"].numpy(), expected_emb([i])[0])
                   for it, i in zip(items, probe)))
        ok("the Dataset pickles without its maps (< 1 KiB): a spawned worker maps the files itself",
           len(pickle.dumps(ds)) < 1024)

        gen = torch.Generator().manual_seed(0)
        loader = DataLoader(ds, batch_size=256, shuffle=True, num_workers=2, generator=gen)
        e0, nb, good = epoch_of(loader)
        ok(f"epoch 0: {nb} batches, every one of {ROWS} rows exactly once, each batch's emb the rows its labels name",
           good and len(e0) == ROWS and np.array_equal(np.sort(e0), rows))
        e1, _, good = epoch_of(loader)
        ok("epoch 1: every row once again, in another order",
           good and np.array_equal(np.sort(e1), rows) and not np.array_equal(e0, e1) and not np.array_equal(e0, rows))

        batched = DataLoader(ds, batch_size=None, num_workers=2,
                             sampler=BatchSampler(RandomSampler(ds, generator=torch.Generator().manual_seed(0)),
                                                  batch_size=256, drop_last=False))
        eb, nb, good = epoch_of(batched)
        ok(f"a batch per __getitem__ (sampler=BatchSampler(RandomSampler), batch_size=None): "
           f"{nb} batches, every row once", good and np.array_equal(np.sort(eb), rows))
        spawned = DataLoader(ds, batch_size=256, shuffle=True, num_workers=2, multiprocessing_context="spawn",
                             generator=torch.Generator().manual_seed(0))
        es, nb, good = epoch_of(spawned)
        ok(f"multiprocessing_context='spawn' (workers unpickle the Dataset, map the files): {nb} batches, "
           f"every row once, the same order as fork's epoch 0", good and np.array_equal(es, e0))

        # ---- e. a DataLoader over the Flight stream ------------------------------------------
        print("\n# e. ndarrow serve + TorchBatches (examples/trainers/ndarrow_flight), DataLoader(num_workers=2)")
        port = free_port()
        print("$ ndarrow serve --addr 127.0.0.1:PORT served")
        p = subprocess.Popen([ndarrow, "serve", "--addr", f"127.0.0.1:{port}", served],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = p.stdout.readline()
            ok(f"ndarrow serve: {line.split(' from ')[0]!r}", line.startswith("serving"))
            uri = f"grpc://127.0.0.1:{port}"
            ds = nf.TorchBatches(uri, "t", 500, seed=7, epoch=0, columns=["emb", "label"],
                                 drop_last=False)
            loader = DataLoader(ds, batch_size=None, num_workers=2)  # worker w reads shard w of 2
            labels, sizes, shards, good = [], [], set(), True
            for batch, cursor in loader:
                labels.append(batch["label"])
                sizes.append(len(batch["label"]))
                shards.add(nf.shard_of(cursor))
                good &= np.array_equal(batch["emb"].numpy(), expected_emb(batch["label"].numpy()))
            labels = torch.cat(labels).numpy()
            ok(f"one epoch: {len(sizes)} batches from shards {sorted(shards)} (sizes {sorted(set(sizes))}), "
               f"every one of {ROWS} rows exactly once, shuffled, each emb the rows its labels name",
               good and len(labels) == ROWS and np.array_equal(np.sort(labels), rows)
               and not np.array_equal(labels, rows))
        finally:
            p.terminate()  # SIGTERM: a graceful shutdown
            code = p.wait(timeout=30)
        ok(f"ndarrow serve stopped on SIGTERM: exit {code}", code == 0)
    print("\nall checks passed")


if __name__ == "__main__":
    main()
