"""TorchBatches: a served table's mini-batches as a torch IterableDataset."""

import warnings

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from ._client import batches, client_of, command

# NumPy dtypes torch has no tensor of, and the dtype that holds each of their values exactly.
_WIDENED = {np.dtype("uint16"): np.int32, np.dtype("uint32"): np.int64}


def _tensor(name, values, cursor):
    """A column of a batch as torch takes it: a tensor viewing values where torch can; an
    object array (strings, binary, ragged rows) as it is."""
    if isinstance(values, np.ma.MaskedArray):
        raise ValueError(f"column {name!r} holds {int(np.count_nonzero(values.mask))} nulls in the batch before cursor "
                         f"{cursor}: a tensor holds none. Fill them (ndarrow convert --fill VALUE), or read the column "
                         "with ndarrow_flight.batches(), which gives a numpy.ma.MaskedArray")
    if values.dtype == object:
        return values
    if values.dtype in _WIDENED:
        return torch.from_numpy(values.astype(_WIDENED[values.dtype]))
    if values.dtype == np.uint64:
        raise ValueError(f"column {name!r} is uint64, which torch has no tensor of: cast it to int64 before serving it")
    with warnings.catch_warnings():  # the received buffers are read-only
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(values)


class TorchBatches(IterableDataset):
    """One epoch of a served table's mini-batches for a torch DataLoader (batch_size=None).

    Rank `rank` of `world` processes (DDP) each read their share; each DataLoader worker of a
    rank reads a shard of its own: shard rank*workers + worker of world*workers. With
    drop_last every shard gives as many batches. `after` maps shards to the cursors to resume
    after (the last cursor each shard gave). Yields ({column: torch.Tensor}, cursor): the
    tensors view the received buffers (read-only: copy before writing in place); uint16 and
    uint32 columns are widened to int32 and int64 (a copy); strings, binary and ragged columns
    stay NumPy object arrays; a column with nulls in a batch is an error.

    uri is a Client, or a URI with the Client's connection options: token (None: $NDARROW_TOKEN),
    tls_ca, tls_cert, tls_key, transport, max_recv_message_bytes. They are checked, the TLS
    files read and the transport imported here, in the process that makes the dataset; the
    connection is opened by each worker as it starts iterating, never before. Workers forked
    from a process that has made calls of its own that failed may die in grpcio's fork
    handlers: give the DataLoader multiprocessing_context="spawn" there.
    """

    def __init__(self, uri, table, batch_size, seed=None, epoch=0, rank=0, world=1,
                 columns=None, drop_last=True, after=None, token=None, tls_ca=None, tls_cert=None,
                 tls_key=None, transport=None, max_recv_message_bytes=None):
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size {batch_size!r}: a number of rows, more than 0")
        if not 0 <= rank < world:
            raise ValueError(f"rank {rank} of world {world}: 0 <= rank < world")
        self.client = client_of(uri, dict(token=token, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                                          transport=transport, max_recv_message_bytes=max_recv_message_bytes))
        self.table, self.batch_size = table, batch_size
        self.seed, self.epoch, self.rank, self.world = seed, epoch, rank, world
        self.columns, self.drop_last = columns, drop_last
        self.after = dict(after or {})

    def __iter__(self):
        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info else (1, 0)
        shards, shard = self.world * workers, self.rank * workers + worker
        ticket = command(self.table, self.batch_size, self.seed, self.epoch, shard, shards,
                         self.drop_last, self.columns, self.after.get(shard))
        for columns, cursor in batches(self.client, ticket):
            yield {k: _tensor(k, v, cursor) for k, v in columns.items()}, cursor
