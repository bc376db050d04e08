"""Mini-batches of a table served by `ndarrow serve`, for trainers: NumPy, PyTorch, tf.data.

Each worker of a training job asks the server for its shard of an epoch — shuffled by a seed
the job shares, split into `shards` disjoint shards — with the Flight command README.md
documents ("Flight: mini-batches"), and gets one Arrow IPC stream: a record batch per
mini-batch, each batch's cursor in its FlightData app_metadata. Saving the last cursor of
each shard is what a checkpoint needs: the same command with "after" resumes after it.

    import ndarrow_flight as nf
    ds = nf.TorchBatches("grpc+tls://10.0.0.5:8815", "train", batch_size=256, seed=42, epoch=e,
                         rank=rank, world=world, columns=["emb", "label"], tls_ca="ca.pem")
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4)
    for batch, cursor in loader:           # batch: {"emb": Tensor[256, ...], "label": Tensor[256]}
        ...

Every entry point (Client, batches, TorchBatches, tf_batches) takes the server's bearer token
(token=…, else $NDARROW_TOKEN) and, for grpc+tls://, the CA of its certificate (tls_ca) and a
client certificate and key for mutual TLS (tls_cert, tls_key). It needs NumPy and either
pyarrow (pyarrow.flight, used where it is installed) or grpcio; PyTorch for TorchBatches,
TensorFlow for tf_batches. Without pyarrow, ndarrow_flight.ipc reads the Arrow IPC stream
itself (NumPy alone): numbers, bools, strings, binary, fixed-size and variable lists,
dictionaries, nulls — what ndarrow sends. ndarrow_flight.read_stream reads a stream from a
file or a pipe the same way (`ndarrow batches … -`).

Importing it sets GRPC_ENABLE_FORK_SUPPORT=true when grpc is not imported yet and the
variable is not set: a DataLoader worker forked while its parent has a gRPC channel open then
works instead of hanging (grpcio reads the variable when it is first imported). A parent whose
own calls failed (a server it could not reach) may still lose its forked workers in grpcio's
fork handlers: DataLoader(multiprocessing_context="spawn") works whatever the parent did.
"""

import os
import sys

if "grpc" not in sys.modules:
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "true")

from . import ipc  # noqa: E402
from ._client import (  # noqa: E402
    DEFAULT_MAX_RECV_MESSAGE_BYTES, Client, FlightError, batches, command, shard_of, tf_batches)
from .ipc import IPCError, read_stream  # noqa: E402

__version__ = "0.1.0.dev0"  # ndarrow 0.1.0-dev
__all__ = ["Client", "FlightError", "IPCError", "TorchBatches", "batches", "command", "ipc",
           "read_stream", "shard_of", "tf_batches", "DEFAULT_MAX_RECV_MESSAGE_BYTES"]


def __getattr__(name):
    """TorchBatches, imported from PyTorch when first asked for: ImportError then, naming
    the package, when PyTorch is missing."""
    if name == "TorchBatches":
        try:
            from ._torch import TorchBatches
        except ImportError as e:
            raise ImportError(f"ndarrow_flight.TorchBatches needs PyTorch ({e}): apt-get install python3-torch "
                              "(Debian), or pip install torch") from None
        return TorchBatches
    raise AttributeError(f"module 'ndarrow_flight' has no attribute {name!r}")
