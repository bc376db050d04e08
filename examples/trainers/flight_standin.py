"""A stand-in for the part of pyarrow.flight that ndarrow_flight.py uses, for machines
without pyarrow (Debian has no package of it): connect(uri).do_get(Ticket(b)).read_chunk(),
over grpcio and NumPy.

It speaks Flight's DoGet itself — the Ticket and FlightData protobufs written and read by
hand (field numbers from Flight.proto) — and reads the Arrow IPC messages they carry (the
flatbuffers of Schema.fbs and Message.fbs, read by hand) as far as the mini-batch streams of
check.py need: columns of integers and floats, fixed-size lists of them and
arrow.fixed_shape_tensor, without nulls, uncompressed. Anything else is an error. It is a
checking tool, not a Flight client: use pyarrow.
"""

import json
import struct

import grpc
import numpy as np


class FlightError(Exception):
    pass


class Ticket:
    def __init__(self, ticket):
        self.ticket = ticket


def connect(uri):
    return _Client(uri)


class _Client:
    def __init__(self, uri):
        if not uri.startswith("grpc://"):
            raise FlightError(f"{uri}: only grpc:// here")
        self.channel = grpc.insecure_channel(uri[len("grpc://"):], options=[
            ("grpc.max_receive_message_length", 1 << 30)])
        self.do_get_call = self.channel.unary_stream(
            "/arrow.flight.protocol.FlightService/DoGet",
            request_serializer=lambda t: _field(1, t.ticket),
            response_deserializer=lambda b: b)

    def do_get(self, ticket):
        return _Reader(self.do_get_call(ticket))


def _varint(b, i):
    out, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return out, i


def _field(number, data):
    """A length-delimited protobuf field."""
    head, n = bytearray([number << 3 | 2]), len(data)
    while True:
        head.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(head) + data


def _flight_data(msg):
    """FlightData's data_header (2), app_metadata (3) and data_body (1000)."""
    out, i = {}, 0
    while i < len(msg):
        key, i = _varint(msg, i)
        if key & 7 != 2:
            raise FlightError(f"FlightData field {key >> 3}: wire type {key & 7}")
        n, i = _varint(msg, i)
        out[key >> 3] = msg[i:i + n]
        i += n
    return out.get(2, b""), out.get(3), out.get(1000, b"")


class _Table:
    """A flatbuffers table at pos of buf."""

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        n = struct.unpack_from("<H", buf, vt)[0]
        self.fields = struct.unpack_from(f"<{(n - 4) // 2}H", buf, vt + 4)

    def _at(self, i):
        return self.pos + self.fields[i] if i < len(self.fields) and self.fields[i] else None

    def scalar(self, i, fmt, default=0):
        p = self._at(i)
        return default if p is None else struct.unpack_from(fmt, self.buf, p)[0]

    def _ref(self, i):
        p = self._at(i)
        return None if p is None else p + struct.unpack_from("<I", self.buf, p)[0]

    def table(self, i):
        p = self._ref(i)
        return None if p is None else _Table(self.buf, p)

    def string(self, i):
        p = self._ref(i)
        if p is None:
            return None
        n = struct.unpack_from("<I", self.buf, p)[0]
        return bytes(self.buf[p + 4:p + 4 + n]).decode()

    def tables(self, i):
        p = self._ref(i)
        if p is None:
            return []
        n = struct.unpack_from("<I", self.buf, p)[0]
        return [_Table(self.buf, p + 4 + 4 * k + struct.unpack_from("<I", self.buf, p + 4 + 4 * k)[0]) for k in range(n)]

    def structs(self, i, fmt):
        p = self._ref(i)
        if p is None:
            return []
        n, size = struct.unpack_from("<I", self.buf, p)[0], struct.calcsize(fmt)
        return [struct.unpack_from(fmt, self.buf, p + 4 + size * k) for k in range(n)]


def _message(header):
    """The Message flatbuffer: (header type, header table, body length)."""
    m = _Table(header, struct.unpack_from("<I", header, 0)[0])
    return m.scalar(1, "<B"), m.table(2), m.scalar(3, "<q")


# Schema.fbs's Type union: 2 Int, 3 FloatingPoint, 16 FixedSizeList.
_INT, _FLOAT, _FSL = 2, 3, 16


class _Field:
    def __init__(self, t):
        self.name = t.string(0)
        kind, typ = t.scalar(2, "<B"), t.table(3)
        meta = {m.string(0): m.string(1) for m in t.tables(6)}
        self.children = [_Field(c) for c in t.tables(5)]
        if kind == _INT:
            bits, signed = typ.scalar(0, "<i"), typ.scalar(1, "<B")
            self.dtype = np.dtype(f"{'i' if signed else 'u'}{bits // 8}")
        elif kind == _FLOAT:
            self.dtype = np.dtype(["f2", "f4", "f8"][typ.scalar(0, "<h")])
        elif kind == _FSL:
            self.size = typ.scalar(0, "<i")
        else:
            raise FlightError(f"column {self.name}: type {kind} is not read here")
        self.kind = kind
        self.shape = None
        if meta.get("ARROW:extension:name") == "arrow.fixed_shape_tensor":
            self.shape = json.loads(meta["ARROW:extension:metadata"])["shape"]

    def read(self, rows, nodes, buffers, body):
        """The field's values, rows first, from the next nodes and buffers."""
        length, nulls = nodes.pop(0)
        validity = buffers.pop(0)
        if nulls:
            raise FlightError(f"column {self.name}: {nulls} nulls are not read here")
        if self.kind == _FSL:
            inner = self.children[0].read(rows * self.size, nodes, buffers, body)
            return inner.reshape(rows, self.size, *inner.shape[1:])
        off, n = buffers.pop(0)
        return np.frombuffer(body, self.dtype, length, off)


class _Column:
    def __init__(self, values, tensor):
        self.values, self.tensor = values, tensor

    def to_numpy(self, zero_copy_only=True):
        return self.values

    def to_numpy_ndarray(self):
        return self.values


class _Schema:
    def __init__(self, fields):
        self.fields, self.names = fields, [f.name for f in fields]


class _Batch:
    def __init__(self, schema, columns, rows):
        self.schema, self.columns, self.num_rows = schema, columns, rows

    def column(self, name):
        return self.columns[self.schema.names.index(name)]


class _Chunk:
    def __init__(self, data, app_metadata):
        self.data, self.app_metadata = data, app_metadata


class _Metadata(bytes):
    def to_pybytes(self):
        return bytes(self)


class _Reader:
    def __init__(self, stream):
        self.stream, self.schema = stream, None

    def read_chunk(self):
        try:
            while True:
                header, meta, body = _flight_data(next(self.stream))
                if not header:
                    continue
                kind, table, body_length = _message(header)
                if kind == 1:  # Schema
                    self.schema = _Schema([_Field(f) for f in table.tables(1)])
                    continue
                if kind != 3:  # RecordBatch; dictionaries and the rest are not read here
                    raise FlightError(f"message header {kind} is not read here")
                if table.table(3) is not None:
                    raise FlightError("compressed record batches are not read here")
                rows = table.scalar(0, "<q")
                nodes = table.structs(1, "<qq")
                buffers = table.structs(2, "<qq")
                columns = []
                for f in self.schema.fields:
                    values = f.read(rows, nodes, buffers, body)
                    if f.shape is not None:
                        values = values.reshape(rows, *f.shape)
                    columns.append(_Column(values, f.shape is not None))
                return _Chunk(_Batch(self.schema, columns, rows), None if meta is None else _Metadata(meta))
        except StopIteration:
            raise
        except grpc.RpcError as e:
            raise FlightError(f"{e.code().name}: {e.details()}") from None
