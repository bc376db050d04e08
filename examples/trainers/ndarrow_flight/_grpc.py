"""Flight's DoGet over grpcio: the Ticket and FlightData protobufs written and read by hand
(field numbers from Flight.proto), TLS and the bearer token as the Go server expects them.

Each process opens its own channel to a server, at its first call, and keeps it for the
next: a DataLoader worker never uses one its parent opened. gRPC does not survive a fork of a
process that has used it unless grpcio's fork support is on (GRPC_ENABLE_FORK_SUPPORT, which
ndarrow_flight turns on when it is imported before grpc): a worker forked without it is told
so (forked_from_a_user) instead of hanging.
"""

import os

import grpc

_DO_GET = "/arrow.flight.protocol.FlightService/DoGet"

# The channels this process opened, one per server and credentials, kept open for its later
# calls (a channel is made to last: its connection is reused); opened is how many this
# process and those it was forked from opened, pid the process they are this one's in.
_channels = {"pid": os.getpid(), "open": {}, "opened": 0}


class FlightDataError(ValueError):
    """A FlightData message that does not parse as the protobuf it should be."""


def _varint(b, i):
    out, shift = 0, 0
    while True:
        if i >= len(b) or shift > 63:
            raise FlightDataError(f"a varint at byte {i} of a {len(b)}-byte FlightData")
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return out, i


def ticket_message(ticket):
    """The Ticket protobuf: its bytes in field 1."""
    head, n = bytearray([1 << 3 | 2]), len(ticket)
    while True:
        head.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(head) + ticket


def flight_data(msg):
    """FlightData's data_header (2), app_metadata (3, None when absent) and data_body (1000),
    views of msg; other fields are passed over."""
    msg = memoryview(msg)
    fields, i = {}, 0
    while i < len(msg):
        key, i = _varint(msg, i)
        wire = key & 7
        if wire == 0:
            _, i = _varint(msg, i)
            continue
        if wire == 1 or wire == 5:
            i += 8 if wire == 1 else 4
            if i > len(msg):
                raise FlightDataError(f"field {key >> 3} runs past the {len(msg)}-byte FlightData")
            continue
        if wire != 2:
            raise FlightDataError(f"FlightData field {key >> 3}: wire type {wire}")
        n, i = _varint(msg, i)
        if i + n > len(msg):
            raise FlightDataError(f"field {key >> 3} of {n} bytes runs past the {len(msg)}-byte FlightData")
        fields[key >> 3] = msg[i:i + n]
        i += n
    meta = fields.get(3)
    return fields.get(2, memoryview(b"")), None if meta is None else bytes(meta), fields.get(1000, memoryview(b""))


def forked_from_a_user(fork_support):
    """How many channels the process this one was forked from had opened, when that fork
    makes gRPC unusable here (grpcio's fork support off: a call would hang), else 0. The
    channels inherited are left alone either way, and this process opens its own."""
    if _channels["pid"] == os.getpid():
        return 0
    inherited = _channels["opened"]
    _channels.update(pid=os.getpid(), open={}, opened=0 if fork_support else inherited)
    return 0 if fork_support else inherited


def _channel(target, tls, credentials, max_recv_message_bytes):
    key = (target, tls, credentials, max_recv_message_bytes)
    channel = _channels["open"].get(key)
    if channel is not None:
        return channel
    options = [("grpc.max_receive_message_length", max_recv_message_bytes),
               ("grpc.max_send_message_length", 64 << 20)]
    if tls:
        ca, key_pem, cert = credentials
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(
            root_certificates=ca, private_key=key_pem, certificate_chain=cert), options)
    else:
        channel = grpc.insecure_channel(target, options)
    _channels["open"][key] = channel
    _channels["opened"] += 1
    return channel


def do_get(target, tls, credentials, token, ticket, max_recv_message_bytes):
    """The (data_header, app_metadata, data_body) of each FlightData of a DoGet of ticket at
    target (host:port), over TLS when tls; credentials are (root CA, private key,
    certificate chain) PEM bytes, each None for none. Raises grpc.RpcError."""
    channel = _channel(target, tls, credentials, max_recv_message_bytes)
    call = channel.unary_stream(_DO_GET, request_serializer=ticket_message, response_deserializer=None)
    metadata = [("authorization", "Bearer " + token)] if token else None
    stream = call(ticket, metadata=metadata)
    try:
        for msg in stream:
            yield flight_data(msg)
    finally:
        stream.cancel()  # a stream left before its end: the server stops sending
