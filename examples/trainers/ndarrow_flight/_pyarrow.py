"""Flight's DoGet over pyarrow.flight (Arrow C++'s client: its TLS, its gRPC).

The record batches pyarrow decodes are handed on re-encoded by pyarrow's own IPC stream
writer (schema, dictionaries — replaced or not — and batch, as messages), so that
ndarrow_flight.ipc turns them into NumPy arrays exactly as it does what grpcio receives: both
transports give the same values.
"""

import io

import pyarrow as pa
import pyarrow.flight as flight

# pyarrow.flight's errors and the gRPC status each stands for.
_CODES = {"FlightUnauthenticatedError": "UNAUTHENTICATED", "FlightUnauthorizedError": "PERMISSION_DENIED",
          "FlightUnavailableError": "UNAVAILABLE", "FlightTimedOutError": "DEADLINE_EXCEEDED",
          "FlightCancelledError": "CANCELLED", "FlightInternalError": "INTERNAL"}

Error = pa.ArrowException


def code_of(e):
    """The gRPC status name a pyarrow.flight error stands for, "UNKNOWN" when none."""
    for cls in type(e).__mro__:
        if cls.__name__ in _CODES:
            return _CODES[cls.__name__]
    return "UNKNOWN"


def do_get(uri, tls, credentials, token, ticket, max_recv_message_bytes):
    """(stream bytes, app_metadata) for each FlightData of a DoGet of ticket at uri: the IPC
    messages (schema and dictionaries the first time and when they change, then the record
    batch) of its record batch, and its app_metadata (None when absent). credentials are
    (root CA, private key, certificate chain) PEM bytes, each None for none. Raises
    pyarrow.ArrowException."""
    ca, key, cert = credentials
    kwargs = {"generic_options": [("grpc.max_receive_message_length", max_recv_message_bytes)]}
    if tls:
        kwargs.update(tls_root_certs=ca, cert_chain=cert, private_key=key)
    client = flight.FlightClient(uri, **kwargs)
    try:
        headers = [(b"authorization", b"Bearer " + token.encode())] if token else []
        reader = client.do_get(flight.Ticket(ticket), options=flight.FlightCallOptions(headers=headers))
        sink, writer = io.BytesIO(), None
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                break
            if writer is None:
                writer = pa.ipc.new_stream(sink, reader.schema)
            if chunk.data is not None:
                writer.write_batch(chunk.data)
            data = sink.getvalue()
            sink.seek(0)
            sink.truncate()
            yield data, None if chunk.app_metadata is None else chunk.app_metadata.to_pybytes()
        if writer is None:  # a stream of no batch: its schema
            writer = pa.ipc.new_stream(sink, reader.schema)
        writer.close()
        if sink.getvalue():
            yield sink.getvalue(), None
    finally:
        client.close()
