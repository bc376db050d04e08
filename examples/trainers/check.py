"""Checks ndarrow_flight's recipes against a real `ndarrow serve` with TLS and a token, with PyTorch.

    go build -o /tmp/ndarrow ./cmd/ndarrow
    /usr/bin/python3 examples/trainers/check.py /tmp/ndarrow

Needs NumPy and PyTorch (Debian: python3-numpy python3-torch) and, where pyarrow is missing
(Debian has no package of it), grpcio (python3-grpcio), over which ndarrow_flight then reads
the stream itself. It writes a table of 20000 rows — emb float32 [64] (row r: r, r+0.5, …) and
label int64 (r) — as ZSTD Parquet, serves it over TLS with a token (serve --tls-cert, the
token in $NDARROW_TOKEN; the certificates of tls_files.py), and checks that:

- two ranks of a DataLoader of two workers each (four shards) see every row once in an epoch,
  each batch's emb the rows its labels name, every batch 256 rows (drop_last);
- the cursors each shard's stream carries are those `ndarrow batches --cursors` writes of the
  file for that shard, and the order is the same in a second run;
- another epoch gives another order;
- resuming a shard after a cursor gives exactly the batches that followed it;
- a batch larger than the server's message limit arrives whole (its pieces joined);
- README.md's "For trainers" snippet, run as it is written (its server's address made this
  one's) in two ranks of a DataLoader of four workers: every row at most once in batches of
  256 rows, each emb the rows its labels name, and its checkpoint (`cursors`) each shard's last
  cursor, those `ndarrow batches --cursors` writes; the snippet's CA file made this one's, its
  token taken from $NDARROW_TOKEN.

It prints one line per check and exits 1 at the first that fails, 77 when a module it needs
is missing. tf_batches is not checked: TensorFlow is not installable here. CI runs it
(cmd/ndarrow TestPythonExamples).
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "..", "README.md")
MISSING = 77  # the exit status saying a module it needs is missing (cmd/ndarrow TestPythonExamples)

try:
    import numpy as np
    import torch

    sys.path.insert(0, HERE)
    import ndarrow_flight as nf
    import tls_files

    FLIGHT = nf.Client("grpc://127.0.0.1:1", token="").transport  # pyarrow where it is installed, else grpcio
except ImportError as e:
    print(f"check.py: {e} (Debian: apt-get install python3-numpy python3-torch python3-grpcio)", file=sys.stderr)
    sys.exit(MISSING)

# The snippet's four workers a rank on two cores: torch's advice against it is beside the point.
warnings.filterwarnings("ignore", message="This DataLoader will create", category=UserWarning)

ROWS, WIDTH, BATCH = 20000, 64, 256
TABLE = "train"  # the README's snippet's name
TOKEN = "check-" + os.urandom(8).hex()  # the server's bearer token
TLS = {}  # tls_files.files(): the CA, the server's certificate and key


def ok(what, cond):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(ndarrow, d, *flags):
    """ndarrow serve of d over TLS (TLS's server certificate) with TOKEN, and its URI."""
    port = free_port()
    p = subprocess.Popen([ndarrow, "serve", "--addr", f"127.0.0.1:{port}", "--tls-cert", TLS["server.pem"],
                          "--tls-key", TLS["server.key"], *flags, d], env=dict(os.environ, NDARROW_TOKEN=TOKEN),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("serving"):
        p.kill()
        sys.exit(f"ndarrow serve did not start: {line}{p.stderr.read()}")
    return p, f"grpc+tls://127.0.0.1:{port}"


def epoch_of(uri, epoch, world=2, workers=2, after=None):
    """Every batch of every rank's DataLoader: [(shard, labels, emb, cursor)]."""
    out = []
    for rank in range(world):
        ds = nf.TorchBatches(uri, TABLE, BATCH, seed=42, epoch=epoch, rank=rank, world=world,
                             columns=["emb", "label"], after=after, token=TOKEN, tls_ca=TLS["ca.pem"])
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers)
        for batch, cursor in loader:
            out.append((nf.shard_of(cursor), batch["label"], batch["emb"], cursor))
    return out


def readme_snippet():
    """The Python of README.md's "For trainers" snippet, up to its tf.data part (TensorFlow is
    not installable here)."""
    with open(README) as f:
        text = f.read()
    section = text[text.index("### For trainers"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code = code[:code.index("```")]
    return code[:code.index("# tf.data")] if "# tf.data" in code else code


def run_readme_snippet(ndarrow, uri, table, tmp, epoch=3, world=2):
    """Runs the README's snippet as it is written — its server's address made uri's, its CA
    file TLS's, its token in $NDARROW_TOKEN — in each rank of world, and checks what its loop
    saw and its checkpoint."""
    code = re.sub(r'"grpc\+tls://[^"]*"', repr(uri), readme_snippet())
    ok("README's snippet names a grpc+tls:// server", repr(uri) in code)
    code = code.replace('"ca.pem"', repr(TLS["ca.pem"]))
    ok("README's snippet names its CA file ca.pem", repr(TLS["ca.pem"]) in code)
    os.environ["NDARROW_TOKEN"] = TOKEN
    seen, shards, checkpoint = [], None, {}
    for rank in range(world):
        steps = []
        scope = {"epoch": epoch, "rank": rank, "world": world,
                 "step": lambda emb, label: steps.append((emb, label))}
        exec(compile(code, "README.md (For trainers)", "exec"), scope)
        loader = scope["loader"]
        shards = world * loader.num_workers
        seen += steps
        checkpoint.update(scope["cursors"])
    labels = torch.cat([label for _, label in seen]).numpy()
    per_shard = ROWS // shards // BATCH * BATCH
    ok(f"README's snippet, {world} ranks: {len(seen)} batches of {BATCH} rows from {shards} shards",
       all(len(label) == BATCH for _, label in seen) and len(labels) == shards * per_shard)
    ok("README's snippet: every row at most once, each batch's emb the rows its labels name",
       len(set(labels.tolist())) == len(labels) and
       all(torch.equal(emb, (label[:, None] + torch.arange(WIDTH) / 2).float()) for emb, label in seen))
    want = {}
    for shard in range(shards):
        cursors = os.path.join(tmp, f"readme-cursors-{shard}.txt")
        subprocess.run([ndarrow, "batches", "--batch-size", str(BATCH), "--shuffle", "42", "--epoch", str(epoch),
                        "--shard", f"{shard}/{shards}", "--drop-last", "--columns", "emb,label", "--cursors", cursors,
                        table, "-"], check=True, stdout=subprocess.DEVNULL)
        with open(cursors) as f:
            want[shard] = f.read().split()[-1]
    ok(f"README's snippet: its checkpoint holds each of the {shards} shards' last cursor", checkpoint == want)


def main():
    ndarrow = sys.argv[1] if len(sys.argv) > 1 else "ndarrow"
    print(f"torch {torch.__version__}, numpy {np.__version__}, Flight client: {FLIGHT}")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            TLS.update(tls_files.files(tmp))
        except LookupError as e:
            print(f"check.py: {e}", file=sys.stderr)
            sys.exit(MISSING)
        src, d = os.path.join(tmp, "src"), os.path.join(tmp, "served")
        os.makedirs(src)
        os.makedirs(d)
        rows = np.arange(ROWS, dtype=np.int64)
        np.save(os.path.join(src, "emb.npy"), (rows[:, None] + np.arange(WIDTH) / 2).astype(np.float32))
        np.save(os.path.join(src, "label.npy"), rows)
        table = os.path.join(d, TABLE + ".parquet")
        subprocess.run([ndarrow, "convert", src, table], check=True)

        p, uri = serve(ndarrow, d, "--max-message-bytes", "1048576")
        try:
            first = epoch_of(uri, 3)
            labels = torch.cat([b[1] for b in first]).numpy()
            per_shard = ROWS // 4 // BATCH * BATCH
            ok(f"four shards of epoch 3: {len(first)} batches of {BATCH} rows",
               all(len(b[1]) == BATCH for b in first) and len(labels) == 4 * per_shard)
            ok("every row at most once, the shards' rows disjoint", len(set(labels.tolist())) == len(labels))
            ok("shuffled", not np.all(np.diff(labels) > 0))
            ok("each batch's emb the rows its labels name",
               all(torch.equal(b[2], (b[1][:, None] + torch.arange(WIDTH) / 2).float()) for b in first))
            ok("the tensors are torch tensors of the columns' dtypes",
               first[0][2].dtype == torch.float32 and first[0][1].dtype == torch.int64 and tuple(first[0][2].shape) == (BATCH, WIDTH))

            again = epoch_of(uri, 3)
            ok("the same options give the same batches", all(torch.equal(a[1], b[1]) and a[3] == b[3] for a, b in zip(first, again)))
            other = torch.cat([b[1] for b in epoch_of(uri, 4)]).numpy()
            ok("epoch 4 another order", not np.array_equal(np.sort(other), other) and not np.array_equal(other, labels))

            for shard in range(4):
                cursors = os.path.join(tmp, f"cursors-{shard}.txt")
                subprocess.run([ndarrow, "batches", "--batch-size", str(BATCH), "--shuffle", "42", "--epoch", "3",
                                "--shard", f"{shard}/4", "--drop-last", "--columns", "emb,label", "--cursors", cursors,
                                table, "-"], check=True, stdout=subprocess.DEVNULL)
                with open(cursors) as f:
                    local = f.read().split()
                ok(f"shard {shard}: the stream's cursors are ndarrow batches' of the file ({len(local)})",
                   local == [b[3] for b in first if b[0] == shard])

            shard1 = [b for b in first if b[0] == 1]
            rest = epoch_of(uri, 3, after={1: shard1[4][3]})
            resumed = [b for b in rest if b[0] == 1]
            ok(f"shard 1 resumed after batch 4: the {len(shard1) - 5} batches after it",
               len(resumed) == len(shard1) - 5 and all(torch.equal(a[1], b[1]) for a, b in zip(resumed, shard1[5:])))
            ok("the other shards start from their first batch again",
               [b[3] for b in rest if b[0] == 0] == [b[3] for b in first if b[0] == 0])

            # Before this process opens a connection of its own, which its DataLoaders' forked
            # workers would inherit (grpcio's connections do not survive a fork).
            run_readme_snippet(ndarrow, uri, table, tmp)

            ticket = nf.command(TABLE, 8192, seed=1, columns=["emb", "label"])
            client = nf.Client(uri, token=TOKEN, tls_ca=TLS["ca.pem"])
            pieces = sum(1 for _ in client.do_get(ticket))
            big = list(nf.batches(client, ticket))
            ok(f"batches of 8192 rows (2 MiB, sent as {pieces} record batches under the 1 MiB message limit) arrive whole",
               pieces > len(big) == ROWS // 8192 and all(len(c["label"]) == 8192 and c["emb"].shape == (8192, WIDTH) for c, _ in big))
        finally:
            p.terminate()
            p.wait(timeout=30)


if __name__ == "__main__":
    main()
