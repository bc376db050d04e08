"""Checks ndarrow_flight's connection options and its IPC reader against a real `ndarrow serve`.

    go build -o /tmp/ndarrow ./cmd/ndarrow
    /usr/bin/python3 examples/trainers/client_check.py /tmp/ndarrow

Needs NumPy, grpcio (or pyarrow), PyTorch, lz4 and zstandard (Debian: python3-numpy
python3-grpcio python3-torch python3-lz4 python3-zstandard), and certificates (tls_files.py: $NDARROW_EXAMPLES_TLS, else openssl). It
serves Arrow C++'s dict.parquet (flight/testdata/arrow-cpp-17: a label int64 and a category,
dictionary<values=string, indices=int32> with two nulls) three ways — over TLS with a token,
over mutual TLS with a token, in plain text — and checks that:

- the mini-batches of the table over TLS with the token read as `ndarrow convert` writes the
  columns to .npy (its nulls None), the category a dictionary column on the wire;
- the token is taken from $NDARROW_TOKEN when none is given; a wrong token and none are
  UNAUTHENTICATED, each saying what to pass; a token to a grpc:// server warns;
- TLS without the CA, grpc:// to the TLS server and grpc+tls:// to the plain one fail with
  UNAVAILABLE, each saying what to do;
- mutual TLS reads with the client certificate and fails without, saying to pass it;
- TorchBatches in a DataLoader of two workers (forked, and spawned after this process's own
  failed calls) reads every row once over TLS with the token;
- ndarrow_flight.read_stream reads `ndarrow batches … -` (a dictionary batch again before its
  last record batch) as Flight's stream, and refuses the stream cut short with an IPCError;
- the mini-batches of tensors (an arrow.fixed_shape_tensor float32 [2, 3], a fixed-size list of
  bools, float16, uint16) over TLS are the .npy files they were converted from, and
  TorchBatches' tensors of them (uint16 widened to int32);
- the mini-batches of a TFRecord file of TensorFlow's, over TLS, read its ragged int64, float32
  and string features (variable lists on the wire) as Python's protobuf runtime read them
  (tfrecord/testdata/expected.jsonl);
- read_stream reads Arrow's integration streams — every number, bool, binary and string type,
  nulls, large offsets, dictionaries (one shared by two columns), LZ4 and ZSTD bodies
  (python3-lz4, python3-zstandard) — as `ndarrow convert` writes their columns to .npz, and
  refuses a struct column naming it;
- mutants of those streams (bytes changed at random, a fixed seed) read or fail with an
  IPCError, never another exception;
- bad options (TLS files with grpc://, a certificate without its key, a CA file that is not
  there) are a ValueError when the client is made;
- `pip install ./examples/trainers` installs a package that imports outside the repository.

It prints one line per check and exits 1 at the first that fails, 77 when a module it needs
is missing. CI runs it (cmd/ndarrow TestPythonExamples).
"""

import hashlib
import io
import json
import os
import random
import shutil
import socket
import subprocess
import struct
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
DICT = os.path.join(HERE, "..", "..", "flight", "testdata", "arrow-cpp-17", "dict.parquet")
INTEGRATION = os.path.join(HERE, "..", "..", "ipc", "testdata", "arrow-testing", "arrow-ipc-stream", "integration")
# Arrow's integration streams (Arrow C++'s): every number, bool, binary and string type with
# nulls, large offsets, dictionaries of strings and of numbers (one shared by two columns),
# LZ4 and ZSTD bodies.
GOLDEN = [(name, os.path.join(INTEGRATION, d, f"generated_{name}.stream")) for d, name in (
    ("1.0.0-littleendian", "primitive"), ("1.0.0-littleendian", "primitive_large_offsets"),
    ("1.0.0-littleendian", "dictionary"), ("4.0.0-shareddict", "shared_dict"),
    ("2.0.0-compression", "lz4"), ("2.0.0-compression", "zstd"))]
# A TFRecord file of TensorFlow's (Lingvo's) with ragged int64, float32 and string features, and
# what Python's protobuf runtime read of it (tfrecord/testdata/expected.py): each feature's row
# splits and the SHA-256 of its values.
TFDATA = os.path.join(HERE, "..", "..", "tfrecord", "testdata")
LINGVO = "lingvo_wmt14_ende_wpm_32k_test"
NESTED = os.path.join(INTEGRATION, "1.0.0-littleendian", "generated_nested.stream")  # lists and a struct
MISSING = 77  # the exit status saying a module it needs is missing (cmd/ndarrow TestPythonExamples)

try:
    import numpy as np
    import lz4.frame  # noqa: F401  (ndarrow_flight.ipc imports them when a stream is compressed)
    import torch
    import zstandard  # noqa: F401

    sys.path.insert(0, HERE)
    import ndarrow_flight as nf
    import tls_files

    FLIGHT = nf.Client("grpc://127.0.0.1:1", token="").transport  # pyarrow where it is installed, else grpcio
except ImportError as e:
    print(f"client_check.py: {e} (Debian: apt-get install python3-numpy python3-grpcio python3-torch python3-lz4 python3-zstandard)", file=sys.stderr)
    sys.exit(MISSING)

TOKEN = "check-" + os.urandom(8).hex()
BATCH = 4


def ok(what, cond):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(ndarrow, d, tls, *flags):
    """ndarrow serve of d (TOKEN in $NDARROW_TOKEN) and its URI: over TLS (tls: tls_files'
    {name: path}) when tls, else in plain text."""
    port = free_port()
    cmd = [ndarrow, "serve", "--addr", f"127.0.0.1:{port}", *flags, d]
    if tls:
        cmd[2:2] = ["--tls-cert", tls["server.pem"], "--tls-key", tls["server.key"]]
    p = subprocess.Popen(cmd, env=dict(os.environ, NDARROW_TOKEN=TOKEN),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("serving"):
        p.kill()
        sys.exit(f"ndarrow serve did not start: {line}{p.stderr.read()}")
    return p, f"grpc{'+tls' if tls else ''}://127.0.0.1:{port}"


def joined(got):
    """{column: the rows of every batch, in order} of batches()' (columns, cursor) pairs."""
    out = {}
    for columns, _ in got:
        for name, values in columns.items():
            out.setdefault(name, []).extend(values.tolist())
    return out


def failure(call):
    """The FlightError call raises (None when it raises none)."""
    try:
        call()
    except nf.FlightError as e:
        return e
    return None


def value_error(call):
    """The text of the ValueError call raises, "" when it raises none."""
    try:
        call()
    except ValueError as e:
        return str(e)
    return ""


def torch_epoch(uri, tls, context):
    """(label, cat) of every row of an epoch of TorchBatches of the table in a DataLoader of
    two workers started by context ("fork", "spawn"), the token taken from $NDARROW_TOKEN when
    the dataset is made, sorted by label."""
    os.environ["NDARROW_TOKEN"] = TOKEN
    ds = nf.TorchBatches(uri, "dict", 2, seed=5, columns=["label", "cat"], drop_last=False, tls_ca=tls["ca.pem"])
    del os.environ["NDARROW_TOKEN"]  # read when the dataset was made, not in its workers
    seen = []
    for batch, _ in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=context):
        seen += list(zip(batch["label"].tolist(), batch["cat"].tolist()))
    return sorted(seen, key=lambda r: r[0])


def column_values(values):
    """A column's NumPy array (to_numpy()) as (values, null mask): object arrays' None and
    masked arrays' mask are the nulls; bytes without their trailing NULs (.npy's S dtype
    drops them)."""
    if isinstance(values, np.ma.MaskedArray):
        return values.data, np.asarray(values.mask)
    if values.dtype == object:
        null = np.array([v is None for v in values], dtype=bool)
        return [v.rstrip(b"\0") if isinstance(v, bytes) else v for v in values], null
    return values, np.zeros(len(values), dtype=bool)


def write_cells(ndarrow, tmp, served):
    """Writes served/cells.parquet (ndarrow convert of .npy files) and returns its columns:
    cube float32 [50, 2, 3] (an arrow.fixed_shape_tensor), mask bool [50, 4] (a fixed-size
    list of bools), half float16 [50] and small uint16 [50]."""
    src, r = os.path.join(tmp, "cells"), np.arange(50)
    os.makedirs(src)
    cells = {"cube": (r[:, None, None] * 6 + np.arange(6).reshape(2, 3)).astype(np.float32),
             "mask": (r[:, None] + np.arange(4)) % 3 == 0, "half": (r / 4).astype(np.float16),
             "small": (r * 1000).astype(np.uint16)}
    for name, values in cells.items():
        np.save(os.path.join(src, f"{name}.npy"), values)
    subprocess.run([ndarrow, "convert", src, os.path.join(served, "cells.parquet")], check=True)
    return cells


def check_cells(uri, tls, cells):
    """The mini-batches of cells.parquet over TLS: each column's dtype and cells as the .npy
    files held them; TorchBatches' tensors of them (uint16 widened to int32)."""
    ticket = nf.command("cells", 20, drop_last=False)
    got = list(nf.batches(uri, ticket, token=TOKEN, tls_ca=tls["ca.pem"]))
    joined_cells = {k: np.concatenate([c[k] for c, _ in got]) for k in cells}
    ok(f"tensors over TLS: {[(k, str(v.dtype), v.shape) for k, v in joined_cells.items()]} as the .npy files",
       all(joined_cells[k].dtype == v.dtype and np.array_equal(joined_cells[k], v) for k, v in cells.items()))
    stream = nf.Client(uri, token=TOKEN, tls_ca=tls["ca.pem"]).do_get(ticket)
    types = {f.name: f.type for f in next(stream)[0].schema.fields}
    stream.close()  # the stream left before its end: the call is cancelled
    ok(f"on the wire: {types}", types["cube"].startswith("arrow.fixed_shape_tensor") and
       types["mask"] == "fixed_size_list<bool>[4]" and types["half"] == "halffloat" and types["small"] == "uint16")
    ds = nf.TorchBatches(uri, "cells", 20, drop_last=False, token=TOKEN, tls_ca=tls["ca.pem"])
    stream = iter(ds)
    batch, _ = next(stream)
    stream.close()
    ok(f"TorchBatches' tensors: {[(k, str(v.dtype), tuple(v.shape)) for k, v in batch.items()]}",
       batch["cube"].dtype == torch.float32 and tuple(batch["cube"].shape) == (20, 2, 3) and
       batch["mask"].dtype == torch.bool and batch["half"].dtype == torch.float16 and
       batch["small"].dtype == torch.int32 and torch.equal(batch["small"], torch.from_numpy(cells["small"][:20].astype(np.int32)))
       and torch.equal(batch["cube"], torch.from_numpy(cells["cube"][:20])))


def tf_digest(rows, dtype):
    """The SHA-256 tfrecord/testdata/expected.py gives a feature: over its values in row order,
    int64 and float32 little-endian, strings a 4-byte little-endian length and the bytes."""
    h = hashlib.sha256()
    for row in rows:
        if dtype == "string":
            for v in (row if isinstance(row, np.ndarray) else [row]):
                h.update(struct.pack("<I", len(v)) + v)
        else:
            h.update(np.asarray(row, dtype="<i8" if dtype == "int64" else "<f4").tobytes())
    return h.hexdigest()


def check_ragged(uri, tls):
    """Mini-batches of Lingvo's TFRecord file over TLS, its ragged features variable lists on
    the wire, against what Python's protobuf runtime read of it."""
    with open(os.path.join(TFDATA, "expected.jsonl")) as f:
        want = [r for r in map(json.loads, f) if r.get("name", "").startswith(LINGVO + ".")]
    got = joined(nf.batches(uri, nf.command(LINGVO, 30, drop_last=False), token=TOKEN, tls_ca=tls["ca.pem"]))
    bad = []
    for w in want:
        rows = got.get(w["column"], [])
        splits = np.cumsum([0] + [len(r) for r in rows]).tolist() if w["kind"] == "ragged" else None
        if len(rows) != w["shape"][0] or tf_digest(rows, w["dtype"]) != w["sha256"] or \
                (splits is not None and [splits] != w["row_splits"]):
            bad.append(w["column"])
    ragged = sum(w["kind"] == "ragged" for w in want)
    ok(f"TFRecord's ragged features over TLS: {len(want)} columns ({ragged} ragged), as Python's protobuf read "
       f"them{f' (differ: {bad})' if bad else ''}", not bad and ragged == 8 and set(got) == {w["column"] for w in want})


def check_golden(ndarrow, tmp, name, path):
    """read_stream of one of Arrow's integration streams against what `ndarrow convert` writes
    of it to .npz twice, its null rows filled with 0 and with 1: the rows where those differ
    are the nulls, the others the values."""
    src = os.path.join(tmp, f"{name}.arrows")  # the extension ndarrow reads a stream by
    shutil.copy(path, src)
    filled = []
    for fill in ("0", "1"):
        npz = os.path.join(tmp, f"{name}.{fill}.npz")
        subprocess.run([ndarrow, "convert", "--fill", fill, src, npz], check=True)
        with np.load(npz) as z:
            filled.append({k: z[k] for k in z.files})
    batches = list(nf.read_stream(path))
    got = {}
    for b in batches:
        for column, values in b.to_numpy().items():
            got.setdefault(column, []).append(values)
    bad, nulls = [], 0
    for column, want0 in filled[0].items():
        parts = [column_values(v) for v in got.get(column, [])]
        values = [x for p in parts for x in (p[0].tolist() if hasattr(p[0], "tolist") else p[0])]
        null = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, bool)
        want_null = want0 != filled[1][column]
        nulls += int(want_null.sum())
        want = want0.tolist()
        if len(values) != len(want) or not np.array_equal(null, want_null) or \
                any(v != w for v, w, n in zip(values, want, null) if not n):
            bad.append(column)
    ok(f"read_stream of Arrow's {name}: {len(filled[0])} columns, {sum(b.num_rows for b in batches)} rows, "
       f"{nulls} nulls, as ndarrow convert writes them{f' (differ: {bad})' if bad else ''}",
       not bad and set(got) == set(filled[0]))


def check_mutations(streams, n=400):
    """read_stream of n copies of each stream, one to four bytes of each changed (a fixed
    seed): each reads, or fails with an IPCError — or, of a schema whose names now repeat,
    to_numpy()'s ValueError saying so — never another exception."""
    rng, other, refused = random.Random(46), [], 0
    for name, data in streams:
        for _ in range(n):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                p = rng.randrange(len(b))
                b[p] = rng.choice([0, 0xFF, rng.randrange(256), b[p] ^ (1 << rng.randrange(8))])
            try:
                for batch in nf.read_stream(bytes(b), max_message_bytes=1 << 26):
                    batch.to_numpy()
            except nf.IPCError:
                refused += 1
            except ValueError as e:
                if not str(e).startswith("columns of the same name"):
                    other.append(f"{name}: ValueError: {e}")
            except Exception as e:  # noqa: BLE001 (what the check is for)
                other.append(f"{name}: {type(e).__name__}: {e}")
    ok(f"{n} mutants of each of {len(streams)} streams: {refused} IPCErrors, no other exception{f' ({other[:3]})' if other else ''}",
       not other and refused > 0)


def check_pip_install(tmp):
    """pip install of a copy of examples/trainers (pip builds in the tree it is given) into a
    target directory, and an import of it from outside the repository."""
    src, target = os.path.join(tmp, "trainers"), os.path.join(tmp, "site")
    shutil.copytree(HERE, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps",
                        "--no-index", "--disable-pip-version-check", "--target", target, src],
                       env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore"), capture_output=True, text=True)
    ok(f"pip install ./examples/trainers: exit {r.returncode} {r.stderr.strip()[-300:] if r.returncode else ''}",
       r.returncode == 0)
    r = subprocess.run([sys.executable, "-c", "import ndarrow_flight as nf, ndarrow_flight.ipc; "
                        "print(nf.__file__, nf.__version__, nf.TorchBatches.__name__)"],
                       cwd=tmp, env=dict(os.environ, PYTHONPATH=target), capture_output=True, text=True)
    ok(f"the installed package imports outside the repository: {r.stdout.strip() or r.stderr.strip()[-300:]}",
       r.returncode == 0 and r.stdout.startswith(os.path.join(target, "ndarrow_flight", "__init__.py")))


def main():
    ndarrow = sys.argv[1] if len(sys.argv) > 1 else "ndarrow"
    print(f"numpy {np.__version__}, torch {torch.__version__}, Flight client: {FLIGHT}")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            tls = tls_files.files(tmp)
        except LookupError as e:
            print(f"client_check.py: {e}", file=sys.stderr)
            sys.exit(MISSING)
        served = os.path.join(tmp, "served")
        os.makedirs(served)
        shutil.copy(DICT, os.path.join(served, "dict.parquet"))
        shutil.copy(os.path.join(TFDATA, "tensorflow", LINGVO + ".tfrecord"), served)
        cells = write_cells(ndarrow, tmp, served)
        want = {}
        for column in ("label", "cat"):
            npy = os.path.join(tmp, f"{column}.npy")
            subprocess.run([ndarrow, "convert", "--tensor", f"dict.{column}", "--fill", "<null>", DICT, npy], check=True)
            want[column] = [None if v == "<null>" else v for v in np.load(npy).tolist()]
        ok(f"ndarrow convert: the category's 10 rows, 2 of them null: {want['cat']}",
           len(want["cat"]) == 10 and want["cat"].count(None) == 2)
        ticket = nf.command("dict", BATCH, drop_last=False, columns=["label", "cat"])
        os.environ.pop("NDARROW_TOKEN", None)

        servers = []
        try:
            servers.append(serve(ndarrow, served, tls))
            uri = servers[-1][1]
            servers.append(serve(ndarrow, served, tls, "--tls-client-ca", tls["client-ca.pem"]))
            mutual = servers[-1][1]
            servers.append(serve(ndarrow, served, None))
            plain = servers[-1][1]

            # Before this process makes a call of its own: the DataLoader forks its workers.
            forked = torch_epoch(uri, tls, "fork")
            ok(f"TorchBatches, 2 forked workers, TLS and the token of $NDARROW_TOKEN: every row once {forked}",
               forked == list(zip(want["label"], want["cat"])))

            got = list(nf.batches(uri, ticket, token=TOKEN, tls_ca=tls["ca.pem"]))
            rows = joined(got)
            ok(f"TLS and a token: {len(got)} batches of {[len(c['label']) for c, _ in got]} rows",
               [len(c["label"]) for c, _ in got] == [4, 4, 2])
            ok(f"the category reads as ndarrow convert writes it (None where null): {rows['cat']}",
               rows["cat"] == want["cat"] and rows["label"] == want["label"])
            ok("the category is an object array of str", all(c["cat"].dtype == object for c, _ in got))
            client = nf.Client(uri, token=TOKEN, tls_ca=tls["ca.pem"])
            types = {b.schema.field("cat").type for b, _ in client.do_get(ticket)}
            ok(f"on the wire the category is a dictionary column: {sorted(types)}",
               types == {"dictionary<values=utf8, indices=int32>"})

            os.environ["NDARROW_TOKEN"] = TOKEN
            ok("the token from $NDARROW_TOKEN", joined(nf.batches(uri, ticket, tls_ca=tls["ca.pem"])) == rows)
            del os.environ["NDARROW_TOKEN"]
            e = failure(lambda: list(nf.batches(uri, ticket, token="not-" + TOKEN, tls_ca=tls["ca.pem"])))
            ok(f"a wrong token: {e}", e is not None and e.code == "UNAUTHENTICATED" and "refused the token" in str(e)
               and TOKEN not in str(e))
            e = failure(lambda: list(nf.batches(uri, ticket, tls_ca=tls["ca.pem"])))
            ok(f"no token: {e}", e is not None and e.code == "UNAUTHENTICATED" and "$NDARROW_TOKEN" in str(e))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                nf.Client(plain, token=TOKEN)
            ok(f"a token to a grpc:// server warns: {[str(w.message) for w in caught]}",
               len(caught) == 1 and "clear text" in str(caught[0].message) and TOKEN not in str(caught[0].message))

            e = failure(lambda: list(nf.batches(uri, ticket, token=TOKEN)))
            ok(f"TLS without the CA: {e}", e is not None and e.code == "UNAVAILABLE" and "tls_ca" in str(e))
            e = failure(lambda: list(nf.batches(uri.replace("grpc+tls://", "grpc://"), ticket, token="")))
            ok(f"grpc:// to a TLS server: {e}", e is not None and e.code == "UNAVAILABLE" and "grpc+tls://" in str(e))
            e = failure(lambda: list(nf.batches(plain.replace("grpc://", "grpc+tls://"), ticket, token=TOKEN,
                                                tls_ca=tls["ca.pem"])))
            ok(f"grpc+tls:// to a plain-text server: {e}", e is not None and e.code == "UNAVAILABLE" and "grpc://" in str(e))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the token in clear, said above
                ok("plain text with the token", joined(nf.batches(plain, ticket, token=TOKEN)) == rows)

            got = joined(nf.batches(mutual, ticket, token=TOKEN, tls_ca=tls["ca.pem"], tls_cert=tls["client.pem"],
                                    tls_key=tls["client.key"]))
            ok("mutual TLS with the client's certificate", got == rows)
            with open(tls["client.pem"]) as f:
                cert = f.read()
            got = joined(nf.batches(mutual, ticket, token=TOKEN, tls_ca=tls["ca.pem"], tls_cert=cert,
                                    tls_key=open(tls["client.key"], "rb").read()))
            ok("mutual TLS with the certificate and key given as PEM", got == rows)
            e = failure(lambda: list(nf.batches(mutual, ticket, token=TOKEN, tls_ca=tls["ca.pem"])))
            ok(f"mutual TLS without a client certificate: {e}", e is not None and e.code == "UNAVAILABLE"
               and "tls_cert=" in str(e))

            # This process's own failed calls (below) leave grpcio in a state a forked worker
            # may not survive: a DataLoader of spawned workers is read after them.
            spawned = torch_epoch(uri, tls, "spawn")
            ok(f"TorchBatches, 2 spawned workers after this process's failed calls: every row once {spawned}",
               spawned == list(zip(want["label"], want["cat"])))

            stream = subprocess.run([ndarrow, "batches", "--batch-size", str(BATCH), "--columns", "label,cat", DICT, "-"],
                                    check=True, capture_output=True).stdout
            read = list(nf.read_stream(stream))
            dictionaries = sum(1 for _ in nf.ipc.messages(io.BytesIO(stream))) - 1 - len(read)  # less the schema
            ok(f"read_stream of ndarrow batches … -: {len(read)} batches after {dictionaries} dictionary batches, "
               "as Flight's", [b.num_rows for b in read] == [4, 4, 2] and dictionaries == 2 and
               [v for b in read for v in b.to_numpy()["cat"].tolist()] == want["cat"])
            try:
                list(nf.read_stream(stream[:len(stream) - 20]))
                cut = "no error"
            except nf.IPCError as e:
                cut = str(e)
            ok(f"the stream cut short: IPCError {cut!r}", cut.startswith("the stream ends inside"))

            check_cells(uri, tls, cells)
            check_ragged(uri, tls)
            for name, path in GOLDEN:
                check_golden(ndarrow, tmp, name, path)
            try:
                list(nf.read_stream(NESTED))
                refused = "no error"
            except nf.IPCError as e:
                refused = str(e)
            ok(f"a struct column is an IPCError naming it: {refused!r}", "'struct_nullable' is struct" in refused)
            mutants = [(name, open(path, "rb").read()) for name, path in GOLDEN] + [("batches of dict.parquet", stream)]
            check_mutations(mutants)

            ok("TLS files with grpc://", "use grpc+tls://" in value_error(lambda: nf.Client(plain, tls_ca=tls["ca.pem"])))
            ok("a certificate without its key", "go together" in value_error(
                lambda: nf.Client(uri, tls_ca=tls["ca.pem"], tls_cert=tls["client.pem"])))
            missing = os.path.join(tmp, "no-such-ca.pem")
            ok("a CA file that is not there", missing in value_error(lambda: nf.Client(uri, tls_ca=missing)))
        finally:
            for p, _ in servers:
                p.terminate()
                p.wait(timeout=30)
        check_pip_install(tmp)
    print("all checks passed")


if __name__ == "__main__":
    main()
