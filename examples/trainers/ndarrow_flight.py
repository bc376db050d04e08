"""Mini-batches of a table served by `ndarrow serve`, for trainers: NumPy, PyTorch, tf.data.

Each worker of a training job asks the server for its shard of an epoch — shuffled by a seed
the job shares, split into `shards` disjoint shards — with the Flight command README.md
documents ("Flight: mini-batches"), and gets one Arrow IPC stream: a record batch per
mini-batch, each batch's cursor in its FlightData app_metadata. Saving the last cursor of
each shard is what a checkpoint needs: the same command with "after" resumes after it.

    import ndarrow_flight as nf
    ds = nf.TorchBatches("grpc://10.0.0.5:8815", "train", batch_size=256, seed=42, epoch=e,
                         rank=rank, world=world, columns=["emb", "label"])
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4)
    for batch, cursor in loader:           # batch: {"emb": Tensor[256, ...], "label": Tensor[256]}
        ...

Needs pyarrow (pyarrow.flight) and NumPy; PyTorch for TorchBatches, TensorFlow for
tf_batches. Another module with pyarrow.flight's connect/Ticket/do_get/read_chunk can stand
in for it (flight=...).
"""

import json
import warnings


def command(table, batch_size, seed=None, epoch=0, shard=0, shards=1, drop_last=True,
            columns=None, after=None):
    """The Flight ticket asking for one shard's mini-batches of an epoch (JSON bytes)."""
    cmd = {"name": table, "batch_size": batch_size, "epoch": epoch, "shard": shard,
           "shards": shards, "drop_last": drop_last}
    if seed is not None:
        cmd["shuffle"], cmd["seed"] = True, seed
    if columns:
        cmd["columns"] = list(columns)
    if after:
        cmd["after"] = after
    return json.dumps({"batches": cmd}).encode()


def shard_of(cursor):
    """The shard a cursor's text belongs to: c2.VERSION.SHUFFLE.SEED.EPOCH.SIZE.SHARD.…"""
    return int(cursor.split(".")[6])


def _numpy(column):
    """A column of a record batch as a NumPy array viewing its buffer where it can."""
    if hasattr(column, "to_numpy_ndarray"):  # arrow.fixed_shape_tensor: (rows, *shape)
        return column.to_numpy_ndarray()
    return column.to_numpy(zero_copy_only=False)


def batches(uri, ticket, flight=None):
    """The batches of one DoGet of ticket: ({column: numpy array}, cursor) each, in order.

    A batch larger than the server's message limit arrives as several record batches, only
    the last carrying the cursor: they are joined into one.
    """
    if flight is None:
        import pyarrow.flight as flight
    import numpy as np

    reader = flight.connect(uri).do_get(flight.Ticket(ticket))
    pieces = []
    while True:
        try:
            chunk = reader.read_chunk()
        except StopIteration:
            if pieces:
                raise RuntimeError("the stream ended inside a batch") from None
            return
        pieces.append(chunk.data)
        if chunk.app_metadata is None:
            continue
        cursor = json.loads(chunk.app_metadata.to_pybytes())["cursor"]
        names = pieces[0].schema.names
        columns = {}
        for name in names:
            parts = [_numpy(p.column(name)) for p in pieces]
            columns[name] = parts[0] if len(parts) == 1 else np.concatenate(parts)
        yield columns, cursor
        pieces = []


try:
    from torch.utils.data import IterableDataset as _IterableDataset
except ImportError:  # no PyTorch: TorchBatches cannot be used
    _IterableDataset = object


class TorchBatches(_IterableDataset):
    """One epoch of a served table's mini-batches for a torch DataLoader (batch_size=None).

    Rank `rank` of `world` processes (DDP) each read their share; each DataLoader worker of a
    rank reads a shard of its own: shard rank*workers + worker of world*workers. With
    drop_last every shard gives as many batches. `after` maps shards to the cursors to resume
    after (the last cursor each shard gave). Yields ({column: torch.Tensor}, cursor): the
    tensors view the received buffers (read-only: copy before writing in place).
    """

    def __init__(self, uri, table, batch_size, seed=None, epoch=0, rank=0, world=1,
                 columns=None, drop_last=True, after=None, flight=None):
        self.uri, self.table, self.batch_size = uri, table, batch_size
        self.seed, self.epoch, self.rank, self.world = seed, epoch, rank, world
        self.columns, self.drop_last = columns, drop_last
        self.after, self.flight = dict(after or {}), flight

    def __iter__(self):
        import torch
        from torch.utils.data import get_worker_info

        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info else (1, 0)
        shards, shard = self.world * workers, self.rank * workers + worker
        ticket = command(self.table, self.batch_size, self.seed, self.epoch, shard, shards,
                         self.drop_last, self.columns, self.after.get(shard))
        for columns, cursor in batches(self.uri, ticket, self.flight):
            with warnings.catch_warnings():  # Arrow's buffers are read-only
                warnings.simplefilter("ignore", UserWarning)
                yield {k: torch.from_numpy(v) for k, v in columns.items()}, cursor


def tf_batches(uri, table, batch_size, signature, seed=None, epoch=0, shard=0, shards=1,
               drop_last=True, after=None, flight=None):
    """One shard's epoch as a tf.data.Dataset of ({column: tensor}, cursor).

    signature maps each column to its tf.TensorSpec, the batch's rows first, e.g.
    {"emb": tf.TensorSpec([None, 256], tf.float32), "label": tf.TensorSpec([None], tf.int64)}.
    """
    import tensorflow as tf

    ticket = command(table, batch_size, seed, epoch, shard, shards, drop_last,
                     list(signature), after)
    return tf.data.Dataset.from_generator(
        lambda: batches(uri, ticket, flight),
        output_signature=(signature, tf.TensorSpec([], tf.string)))
