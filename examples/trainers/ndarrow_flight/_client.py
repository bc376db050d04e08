"""Client: how to reach an `ndarrow serve` (URI, token, TLS) and its DoGet; batches, command,
shard_of and tf_batches over it."""

import io
import json
import os
import warnings

import numpy as np

from . import ipc

DEFAULT_MAX_RECV_MESSAGE_BYTES = 1 << 30  # as the Go client's (get --max-recv-message-bytes)
TRANSPORTS = ("pyarrow", "grpcio")
_TRUE = ("1", "true", "yes")


class FlightError(Exception):
    """A call the server refused or that could not reach it: the URI, gRPC's status (code,
    e.g. "UNAUTHENTICATED") and its message, and what to do where that is known."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


def _pem(value, what):
    """PEM bytes from a path or from the PEM itself (bytes or str), None for None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        pem = value
    elif isinstance(value, str) and value.lstrip().startswith("-----BEGIN "):
        pem = value.encode()
    else:
        try:
            with open(value, "rb") as f:
                pem = f.read()
        except OSError as e:
            raise ValueError(f"{what}: cannot read {os.fspath(value)!r}: {e.strerror}") from None
    if b"-----BEGIN " not in pem:
        raise ValueError(f"{what}: {value if not isinstance(value, bytes) else 'the bytes given'!r} holds no PEM block")
    return pem


def _transport(name):
    """The transport name asks for, imported now (None: pyarrow.flight where it is installed,
    else grpcio), so that a missing module is an ImportError here, not in a DataLoader
    worker."""
    if name not in (None,) + TRANSPORTS:
        raise ValueError(f"transport {name!r}: one of {TRANSPORTS}, or None for pyarrow where it is installed, else grpcio")
    if name in (None, "pyarrow"):
        try:
            from . import _pyarrow  # noqa: F401
            return "pyarrow"
        except ImportError as e:
            if name == "pyarrow":
                raise ImportError(f"ndarrow_flight: transport 'pyarrow' needs pyarrow.flight: {e}") from None
    try:
        from . import _grpc  # noqa: F401
    except ImportError as e:
        raise ImportError(f"ndarrow_flight needs grpcio or pyarrow to reach a server ({e}): "
                          "apt-get install python3-grpcio (Debian), or pip install grpcio") from None
    return "grpcio"


class Client:
    """How to reach an `ndarrow serve`, and its DoGet.

    uri is grpc://host:port (grpc+tcp:// too) or grpc+tls://host:port. token is the server's
    bearer token (serve --token), sent as the "authorization: Bearer TOKEN" header of every
    call; None takes $NDARROW_TOKEN, "" sends none. tls_ca is the CA that signed the server's
    certificate (default: the system's roots); tls_cert and tls_key the client's certificate
    and key for a server that requires one (serve --tls-client-ca): each a path or the PEM
    itself, read now. transport is "pyarrow" (pyarrow.flight), "grpcio", or None: pyarrow
    where it is installed, else grpcio — imported now, so that a missing module is an error
    here. max_recv_message_bytes bounds one message received.

    A Client opens no connection until a call, and each call opens its own in the process
    that makes it, closed when the call ends: it can be made before a DataLoader forks its
    workers, and pickled to spawned ones.
    """

    def __init__(self, uri, token=None, tls_ca=None, tls_cert=None, tls_key=None, transport=None,
                 max_recv_message_bytes=DEFAULT_MAX_RECV_MESSAGE_BYTES):
        scheme, sep, target = str(uri).partition("://")
        if not sep or scheme not in ("grpc", "grpc+tcp", "grpc+tls") or not target or "/" in target.rstrip("/"):
            raise ValueError(f"{uri!r} is not a URI like grpc+tls://host:port (the scheme grpc, grpc+tcp or grpc+tls)")
        self.uri, self.target, self.tls = str(uri), target.rstrip("/"), scheme == "grpc+tls"
        if token is None:
            token = os.environ.get("NDARROW_TOKEN", "")
        token = token.strip()
        if any(c in token for c in "\r\n\0"):
            raise ValueError("the token holds a line break or a NUL: it cannot be a header value")
        self.token = token
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together (the client's certificate and its key, for mutual TLS)")
        if not self.tls and (tls_ca is not None or tls_cert is not None):
            raise ValueError(f"TLS files with {self.uri}: use grpc+tls://{self.target}")
        self.credentials = (_pem(tls_ca, "tls_ca"), _pem(tls_key, "tls_key"), _pem(tls_cert, "tls_cert"))
        if max_recv_message_bytes <= 0:
            raise ValueError(f"max_recv_message_bytes {max_recv_message_bytes}: more than 0")
        self.max_recv_message_bytes = int(min(max_recv_message_bytes, (1 << 31) - 1))
        self.transport = _transport(transport)
        if self.token and not self.tls:
            warnings.warn(f"ndarrow_flight: the token goes to {self.uri} in clear text: "
                          f"anyone on the path can read it (use grpc+tls://{self.target})", stacklevel=3)

    def __repr__(self):
        return f"Client({self.uri!r}, transport={self.transport!r}, token={'…' if self.token else None})"

    def do_get(self, ticket):
        """The record batches (ipc.RecordBatch) of a DoGet of ticket (bytes), each with its
        FlightData's app_metadata (bytes, None when absent), in order. Raises FlightError for
        what the server refuses or a server that cannot be reached, ipc.IPCError for a stream
        that does not hold."""
        decoder = ipc.StreamDecoder()
        if self.transport == "grpcio":
            yield from self._grpc_get(ticket, decoder)
        else:
            yield from self._pyarrow_get(ticket, decoder)

    def _grpc_get(self, ticket, decoder):
        import grpc
        from . import _grpc
        inherited = _grpc.forked_from_a_user(os.environ.get("GRPC_ENABLE_FORK_SUPPORT", "").lower() in _TRUE)
        if inherited:
            raise FlightError(f"{self.uri}: this process was forked (a DataLoader worker?) from one that had used gRPC "
                              f"({inherited} channel(s) of ndarrow_flight) with grpcio's fork support off: its calls "
                              "would hang. Set GRPC_ENABLE_FORK_SUPPORT=true before grpc is first imported (importing "
                              "ndarrow_flight first does), make no call in the parent before the loader's workers start, "
                              "or use DataLoader(multiprocessing_context='spawn')")
        try:
            for header, meta, body in _grpc.do_get(self.target, self.tls, self.credentials, self.token, ticket,
                                                  self.max_recv_message_bytes):
                batch = decoder.add(header, body) if len(header) else None
                if batch is not None:
                    yield batch, meta
                elif meta is not None:
                    raise FlightError(f"{self.uri}: app_metadata without a record batch: ndarrow sends none")
        except grpc.RpcError as e:
            raise self._error(e.code().name, e.details()) from None
        except _grpc.FlightDataError as e:
            raise FlightError(f"{self.uri}: {e}") from None

    def _pyarrow_get(self, ticket, decoder):
        from . import _pyarrow
        try:
            for data, meta in _pyarrow.do_get(self.uri, self.tls, self.credentials, self.token, ticket,
                                              self.max_recv_message_bytes):
                batch = None
                for m, body in ipc.messages(io.BytesIO(data)):
                    got = decoder.add(m, body)
                    batch = got if got is not None else batch
                if batch is not None:
                    yield batch, meta
                elif meta is not None:
                    raise FlightError(f"{self.uri}: app_metadata without a record batch: ndarrow sends none")
        except _pyarrow.Error as e:
            raise self._error(_pyarrow.code_of(e), str(e)) from None

    def _error(self, code, details):
        """The FlightError of a failed call: gRPC's status, with what to do where it is known."""
        hint = ""
        text = details or ""
        if code == "UNAUTHENTICATED":
            hint = ("the server refused the token given (token=… or $NDARROW_TOKEN)" if self.token else
                    "the server wants a bearer token: token=… or $NDARROW_TOKEN (serve --token)")
        elif code == "UNAVAILABLE":
            if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
                hint = ("the server's certificate is not signed by tls_ca" if self.credentials[0] else
                        "the server's certificate is not signed by the system's roots: pass its CA as tls_ca=")
            elif self.tls and ("WRONG_VERSION_NUMBER" in text or "wrong version number" in text):
                hint = f"the server speaks plain text: use grpc://{self.target}"
            elif self.tls and self.credentials[2] is None and any(
                    t in text.lower() for t in ("socket closed", "handshake", "certificate required",
                                                "certificate_required", "endpoint read failed")):
                hint = ("does the server require a client certificate (serve --tls-client-ca)? "
                        "pass tls_cert= and tls_key=")
            elif not self.tls and ("Socket closed" in text or "preface" in text or "Connection reset" in text):
                hint = f"does the server speak TLS? use grpc+tls://{self.target}"
        msg = f"{self.uri}: {code}: {details}"
        return FlightError(msg + (f" ({hint})" if hint else ""), code)


def command(table, batch_size, seed=None, epoch=0, shard=0, shards=1, drop_last=True,
            columns=None, after=None):
    """The Flight ticket asking for one shard's mini-batches of an epoch (JSON bytes): README's
    "Flight: mini-batches"."""
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
    parts = cursor.split(".")
    if len(parts) < 10 or parts[0] != "c2":
        raise ValueError(f"{cursor!r} is not a cursor (c2.VERSION.SHUFFLE.SEED.EPOCH.SIZE.SHARD.SHARDS.DROPLAST.NEXT…)")
    return int(parts[6])


def _join(pieces):
    """{column: NumPy array} of the record batches of one mini-batch, joined along the rows."""
    parts = [p.to_numpy() for p in pieces]
    if len(parts) == 1:
        return parts[0]
    out = {}
    for name in parts[0]:
        arrays = [p[name] for p in parts]
        join = np.ma.concatenate if any(isinstance(a, np.ma.MaskedArray) for a in arrays) else np.concatenate
        out[name] = join(arrays)
    return out


def _cursor(meta, uri):
    try:
        cursor = json.loads(meta)["cursor"]
        if isinstance(cursor, str):
            return cursor
    except (ValueError, KeyError, TypeError):
        pass
    raise FlightError(f"{uri}: app_metadata {bytes(meta[:80])!r} is not ndarrow's {{\"cursor\": …}}")


def client_of(uri, connection):
    """uri when it is a Client (connection must then be empty), else a Client of uri and the
    connection's keywords (token, tls_ca, tls_cert, tls_key, transport, max_recv_message_bytes)."""
    if isinstance(uri, Client):
        if any(v is not None for v in connection.values()):
            raise ValueError(f"a Client and connection options {sorted(k for k, v in connection.items() if v is not None)}: give them to the Client")
        return uri
    return Client(uri, **{k: v for k, v in connection.items() if v is not None})


def batches(uri, ticket, token=None, tls_ca=None, tls_cert=None, tls_key=None, transport=None,
            max_recv_message_bytes=None):
    """The mini-batches of one DoGet of ticket (command()): ({column: NumPy array}, cursor)
    each, in order. uri is a Client, or a URI with the Client's connection options. A batch
    larger than the server's message limit arrives as several record batches, only the last
    carrying the cursor: they are joined into one."""
    client = client_of(uri, dict(token=token, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                                 transport=transport, max_recv_message_bytes=max_recv_message_bytes))
    pieces = []
    for batch, meta in client.do_get(ticket):
        pieces.append(batch)
        if meta is None:
            continue
        cursor = _cursor(meta, client.uri)
        yield _join(pieces), cursor
        pieces = []
    if pieces:
        raise FlightError(f"{client.uri}: the stream ended inside a batch: {len(pieces)} record batches after the last cursor")


def tf_batches(uri, table, batch_size, signature, seed=None, epoch=0, shard=0, shards=1,
               drop_last=True, after=None, token=None, tls_ca=None, tls_cert=None, tls_key=None,
               transport=None, max_recv_message_bytes=None):
    """One shard's epoch as a tf.data.Dataset of ({column: tensor}, cursor).

    signature maps each column to its tf.TensorSpec, the batch's rows first, e.g.
    {"emb": tf.TensorSpec([None, 256], tf.float32), "label": tf.TensorSpec([None], tf.int64)}.
    uri is a Client, or a URI with the Client's connection options (checked now).
    """
    import tensorflow as tf

    client = client_of(uri, dict(token=token, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                                 transport=transport, max_recv_message_bytes=max_recv_message_bytes))
    ticket = command(table, batch_size, seed, epoch, shard, shards, drop_last, list(signature), after)
    return tf.data.Dataset.from_generator(
        lambda: batches(client, ticket),
        output_signature=(signature, tf.TensorSpec([], tf.string)))
