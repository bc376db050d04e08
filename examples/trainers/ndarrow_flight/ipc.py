"""A reader of Arrow IPC streams that needs only NumPy: what ndarrow sends, without pyarrow.

It reads the Arrow IPC stream format — `ndarrow batches … -`, `ndarrow get … -`, `convert --to
arrows`, any `.arrows` file, and the messages of a Flight DoGet (ndarrow_flight.Client) — with
the columns ndarrow writes:

- numbers of every width (int8 … uint64, float16, float32, float64) and bools (bit-packed);
- strings and binary (utf8, large_utf8, binary, large_binary, fixed_size_binary);
- fixed-size lists (tensors: an `arrow.fixed_shape_tensor` column is (rows, *shape), its
  permutation applied; ndarrow's `ndarrow.cell_shape` field metadata reshapes a fixed-size list
  of bools or strings, and a list column of empty cells) and variable lists (list, large_list,
  nested: ragged);
- dictionaries (DictionaryBatch messages, replacements and deltas as a stream sends them);
- validity bitmaps (nulls), and bodies compressed with LZ4_FRAME or ZSTD when the lz4 or
  zstandard module is installed (Debian: python3-lz4, python3-zstandard).

Any other type (struct, map, union, dates and times, decimals, views, run-end encoded) is an
IPCError naming its column: nothing is left out in silence. So is input that does not hold
together — a length, an offset, a flatbuffer or a dictionary index outside what the message
holds: each is checked before it is used, and no allocation is larger than the bytes read
allow (a message larger than max_message_bytes is refused before it is read).

    from ndarrow_flight import ipc
    for batch in ipc.read_stream(sys.stdin.buffer):      # ndarrow batches … - | python3 …
        cols = batch.to_numpy()                         # {name: numpy array}

to_numpy() gives, for each column, a NumPy array whose first dimension is the rows: numbers
and bools of their dtype (a view of the message's memory where the layout allows: read-only
for a bytes source); fixed-size lists (rows, size, …) or the tensor's (rows, *shape); strings,
binary and variable lists an object array (str, bytes, or each row's values: views of the
values); dictionaries their values, decoded. A column with nulls is a numpy.ma.MaskedArray
(masked where null) or, for an object array, None where null.
"""

import io
import json
import struct

import numpy as np

__all__ = ["IPCError", "Field", "Schema", "Column", "RecordBatch", "StreamDecoder", "messages",
           "read_stream", "MAX_MESSAGE_BYTES"]

MAX_MESSAGE_BYTES = 1 << 30  # the largest message (metadata and body) read_stream takes by default
MAX_DEPTH = 64  # the deepest nesting of types a schema may have
# The most rows a column of values of no bytes (fixed_size_binary[0]) may claim: its rows take
# no bytes of the message, but its object array a pointer each.
MAX_EMPTY_VALUE_ROWS = 1 << 24
_CONTINUATION = 0xFFFFFFFF
_CHUNK = 1 << 24  # read_stream reads a message in pieces of this size: memory grows with data


class IPCError(ValueError):
    """An Arrow IPC stream this reader cannot read: malformed (a length, an offset, a
    flatbuffer or an index that does not hold: the message says which), or holding what it
    does not read (the message names the column and its type)."""


# Schema.fbs's Type union.
_TYPE_NAMES = {0: "NONE", 1: "null", 2: "int", 3: "floating point", 4: "binary", 5: "utf8",
               6: "bool", 7: "decimal", 8: "date", 9: "time", 10: "timestamp", 11: "interval",
               12: "list", 13: "struct", 14: "union", 15: "fixed_size_binary",
               16: "fixed_size_list", 17: "map", 18: "duration", 19: "large_binary",
               20: "large_utf8", 21: "large_list", 22: "run_end_encoded", 23: "binary_view",
               24: "utf8_view", 25: "list_view", 26: "large_list_view"}
_INT, _FLOAT, _BINARY, _UTF8, _BOOL = 2, 3, 4, 5, 6
_LIST, _FIXED_BINARY, _FIXED_LIST = 12, 15, 16
_LARGE_BINARY, _LARGE_UTF8, _LARGE_LIST = 19, 20, 21
_VARIABLE = {_BINARY: 4, _UTF8: 4, _LARGE_BINARY: 8, _LARGE_UTF8: 8}  # offset widths
# MessageHeader union.
_SCHEMA, _DICTIONARY_BATCH, _RECORD_BATCH, _TENSOR, _SPARSE_TENSOR = 1, 2, 3, 4, 5
_V4 = 3  # MetadataVersion V4, the oldest this reader takes (V5 = 4 is what writers write)
_CODECS = {0: ("LZ4_FRAME", "lz4.frame", "python3-lz4", "lz4"),
           1: ("ZSTD", "zstandard", "python3-zstandard", "zstandard")}
_TENSOR_EXTENSION = "arrow.fixed_shape_tensor"
_CELL_SHAPE = "ndarrow.cell_shape"


# --- flatbuffers, every offset checked --------------------------------------------------


class _Table:
    """A flatbuffers table at pos of buf, each read checked against buf's bounds."""

    __slots__ = ("buf", "pos", "vt", "vtlen", "what")

    def __init__(self, buf, pos, what):
        n = len(buf)
        if pos < 0 or pos + 4 > n:
            raise IPCError(f"{what}: a table at byte {pos} of {n}-byte metadata")
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        if vt < 0 or vt + 4 > n:
            raise IPCError(f"{what}: a vtable at byte {vt} of {n}-byte metadata")
        vtlen = struct.unpack_from("<H", buf, vt)[0]
        if vtlen < 4 or vtlen % 2 or vt + vtlen > n:
            raise IPCError(f"{what}: a vtable of {vtlen} bytes at byte {vt} of {n}-byte metadata")
        self.buf, self.pos, self.vt, self.vtlen, self.what = buf, pos, vt, vtlen, what

    def _slot(self, i):
        o = 4 + 2 * i
        if o + 2 > self.vtlen:
            return None
        off = struct.unpack_from("<H", self.buf, self.vt + o)[0]
        return self.pos + off if off else None

    def scalar(self, i, fmt, default=0):
        p = self._slot(i)
        if p is None:
            return default
        if p + struct.calcsize(fmt) > len(self.buf):
            raise IPCError(f"{self.what}: field {i} at byte {p} of {len(self.buf)}-byte metadata")
        return struct.unpack_from(fmt, self.buf, p)[0]

    def _target(self, i):
        p = self._slot(i)
        if p is None:
            return None
        if p + 4 > len(self.buf):
            raise IPCError(f"{self.what}: field {i} at byte {p} of {len(self.buf)}-byte metadata")
        t = p + struct.unpack_from("<I", self.buf, p)[0]
        if t + 4 > len(self.buf):
            raise IPCError(f"{self.what}: field {i} points at byte {t} of {len(self.buf)}-byte metadata")
        return t

    def table(self, i, what):
        t = self._target(i)
        return None if t is None else _Table(self.buf, t, what)

    def vector(self, i, elem_size):
        """The start and length of the vector in field i, (0, 0) when absent."""
        t = self._target(i)
        if t is None:
            return 0, 0
        n = struct.unpack_from("<I", self.buf, t)[0]
        if t + 4 + n * elem_size > len(self.buf):
            raise IPCError(f"{self.what}: field {i}, a vector of {n} at byte {t}, outruns {len(self.buf)}-byte metadata")
        return t + 4, n

    def string(self, i):
        t = self._target(i)
        if t is None:
            return None
        n = struct.unpack_from("<I", self.buf, t)[0]
        if t + 4 + n > len(self.buf):
            raise IPCError(f"{self.what}: field {i}, a string of {n} bytes at byte {t}, outruns {len(self.buf)}-byte metadata")
        try:
            return bytes(self.buf[t + 4:t + 4 + n]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise IPCError(f"{self.what}: field {i} is not UTF-8: {e}") from None

    def tables(self, i, what):
        start, n = self.vector(i, 4)
        out = []
        for k in range(n):
            p = start + 4 * k
            out.append(_Table(self.buf, p + struct.unpack_from("<I", self.buf, p)[0], f"{what} {k}"))
        return out

    def structs(self, i, fmt):
        size = struct.calcsize(fmt)
        start, n = self.vector(i, size)
        return list(struct.iter_unpack(fmt, self.buf[start:start + n * size]))


def _metadata(t, slot, what):
    """A custom_metadata vector of KeyValue tables as a dict."""
    out = {}
    for kv in t.tables(slot, what):
        out[kv.string(0) or ""] = kv.string(1) or ""
    return out


# --- the schema -------------------------------------------------------------------------


class Field:
    """A field of a stream's schema: name, type (a string, as Arrow writes it: "int64",
    "fixed_size_list<float>[64]"), nullable, metadata (dict), children (Fields) and, for a
    dictionary-encoded field, dictionary_id and index_dtype; extension names its
    ARROW:extension:name, shape and dim_names an arrow.fixed_shape_tensor's cells."""

    def __init__(self, t, what, depth):
        if depth > MAX_DEPTH:
            raise IPCError(f"{what}: types nested more than {MAX_DEPTH} deep")
        self.name = t.string(0) or ""
        what = f"{what} {self.name!r}"
        self.nullable = bool(t.scalar(1, "<B"))
        self.type_id = t.scalar(2, "<B")
        self.metadata = _metadata(t, 6, f"{what} metadata")
        self.children = [Field(c, f"{what} child", depth + 1) for c in t.tables(5, f"{what} children")]
        self.extension = self.metadata.get("ARROW:extension:name")
        self.shape = self.physical_shape = self.dim_names = self.permutation = self.cell_shape = None
        self._what = what
        typ = t.table(3, f"{what} type")
        self._parse_type(typ, what)
        self.dictionary_id = self.index_dtype = None
        self.dictionary_ordered = False
        enc = t.table(4, f"{what} dictionary")
        if enc is not None:
            self.dictionary_id = enc.scalar(0, "<q")
            index = enc.table(1, f"{what} dictionary index type")
            bits, signed = (32, True) if index is None else (index.scalar(0, "<i"), bool(index.scalar(1, "<B")))
            if bits not in (8, 16, 32, 64):
                raise IPCError(f"{what}: dictionary indices of {bits} bits")
            self.index_dtype = np.dtype(f"<{'i' if signed else 'u'}{bits // 8}")
            self.dictionary_ordered = bool(enc.scalar(2, "<B"))
        self._parse_extension(what)

    def _parse_type(self, typ, what):
        k = self.type_id
        need = {_INT: 0, _FLOAT: 0, _BOOL: 0, _FIXED_BINARY: 0, _LIST: 1, _LARGE_LIST: 1, _FIXED_LIST: 1}
        self.dtype, self.size = None, None
        if k in _VARIABLE or k in need:
            if len(self.children) != need.get(k, 0):
                raise IPCError(f"{what}: a {_TYPE_NAMES[k]} with {len(self.children)} children")
        if k == _INT:
            bits, signed = (0, False) if typ is None else (typ.scalar(0, "<i"), bool(typ.scalar(1, "<B")))
            if bits not in (8, 16, 32, 64):
                raise IPCError(f"{what}: an int of {bits} bits")
            self.dtype = np.dtype(f"<{'i' if signed else 'u'}{bits // 8}")
            self.type = f"{'' if signed else 'u'}int{bits}"
        elif k == _FLOAT:
            precision = 0 if typ is None else typ.scalar(0, "<h")
            if precision not in (0, 1, 2):
                raise IPCError(f"{what}: floating point precision {precision}")
            self.dtype = np.dtype(["<f2", "<f4", "<f8"][precision])
            self.type = ["halffloat", "float", "double"][precision]
        elif k == _BOOL:
            self.dtype, self.type = np.dtype(bool), "bool"
        elif k in _VARIABLE:
            self.type = _TYPE_NAMES[k]
        elif k == _FIXED_BINARY:
            self.size = 0 if typ is None else typ.scalar(0, "<i")
            if self.size < 0:
                raise IPCError(f"{what}: fixed_size_binary of {self.size} bytes")
            self.type = f"fixed_size_binary[{self.size}]"
        elif k in (_LIST, _LARGE_LIST):
            self.type = f"{_TYPE_NAMES[k]}<{self.children[0].type}>"
        elif k == _FIXED_LIST:
            self.size = 0 if typ is None else typ.scalar(0, "<i")
            if self.size < 0:
                raise IPCError(f"{what}: fixed_size_list of {self.size}")
            self.type = f"fixed_size_list<{self.children[0].type}>[{self.size}]"
        else:
            name = _TYPE_NAMES.get(k, f"type {k}")
            raise IPCError(f"{what} is {name}: this reader reads numbers, bools, strings, "
                           "binary, lists, fixed-size lists and dictionaries (what ndarrow sends); use pyarrow for it")

    def _parse_extension(self, what):
        self.value_type = self.type
        if self.dictionary_id is not None:
            self.type = f"dictionary<values={self.type}, indices={self.index_dtype.name}>"
        if self.extension == _TENSOR_EXTENSION:
            if self.type_id != _FIXED_LIST or self.dictionary_id is not None:
                raise IPCError(f"{what}: {_TENSOR_EXTENSION} on a {self.type} column")
            try:
                meta = json.loads(self.metadata.get("ARROW:extension:metadata", ""))
                shape = [int(n) for n in meta["shape"]]
                perm = meta.get("permutation")
                perm = None if perm is None else [int(p) for p in perm]
                names = meta.get("dim_names")
            except (ValueError, KeyError, TypeError) as e:
                raise IPCError(f"{what}: {_TENSOR_EXTENSION} metadata {self.metadata.get('ARROW:extension:metadata')!r}: {e}") from None
            if any(n < 0 for n in shape) or int(np.prod(shape, dtype=object)) != self.size:
                raise IPCError(f"{what}: {_TENSOR_EXTENSION} of shape {shape} on lists of {self.size}")
            if perm is not None and sorted(perm) != list(range(len(shape))):
                raise IPCError(f"{what}: {_TENSOR_EXTENSION} permutation {perm} for shape {shape}")
            if names is not None and (not isinstance(names, list) or len(names) != len(shape)):
                raise IPCError(f"{what}: {_TENSOR_EXTENSION} dim_names {names} for shape {shape}")
            self.physical_shape = shape
            self.shape = [shape[p] for p in perm] if perm else shape
            self.permutation, self.dim_names = perm, names
            self.type = f"{_TENSOR_EXTENSION}<{self.children[0].type}>{self.shape}"
        elif self.extension is not None:
            self.type = f"extension<{self.extension}>[{self.type}]"
        if _CELL_SHAPE in self.metadata and self.extension is None:
            try:
                cell = [int(n) for n in json.loads(self.metadata[_CELL_SHAPE])]
            except (ValueError, TypeError) as e:
                raise IPCError(f"{what}: {_CELL_SHAPE} {self.metadata[_CELL_SHAPE]!r}: {e}") from None
            ok = all(n >= 0 for n in cell) and len(cell) > 0 and (
                self.type_id == _FIXED_LIST and int(np.prod(cell, dtype=object)) == self.size or
                self.type_id in (_LIST, _LARGE_LIST) and int(np.prod(cell, dtype=object)) == 0)
            if not ok or self.dictionary_id is not None:
                raise IPCError(f"{what}: {_CELL_SHAPE} {cell} on a {self.type} column")
            self.cell_shape = cell

    def value_field(self):
        """This field without its dictionary encoding: the type of its dictionary's values."""
        v = object.__new__(Field)
        v.__dict__.update(self.__dict__)
        v.dictionary_id = v.index_dtype = None
        v.type, v.metadata, v.extension, v.shape, v.cell_shape = self.value_type, {}, None, None, None
        return v

    def __repr__(self):
        return f"Field({self.name!r}, {self.type})"


class Schema:
    """A stream's schema: fields (Field), names, metadata (dict)."""

    def __init__(self, t):
        if t.scalar(0, "<h") != 0:
            raise IPCError("the stream is big-endian: this reader reads little-endian streams (what every writer writes by default)")
        self.fields = [Field(f, "field", 1) for f in t.tables(1, "schema fields")]
        self.names = [f.name for f in self.fields]
        self.metadata = _metadata(t, 2, "schema metadata")

    def field(self, name):
        """The field named name (KeyError when there is none)."""
        if name not in self.names:
            raise KeyError(f"no column {name!r}: the columns are {self.names}")
        return self.fields[self.names.index(name)]

    def __repr__(self):
        return "Schema(" + ", ".join(f"{f.name}: {f.type}" for f in self.fields) + ")"


# --- record batches ---------------------------------------------------------------------


class _Body:
    """The field nodes and buffers of a RecordBatch message over its body, handed out in
    schema order, each checked against the body."""

    def __init__(self, rb, body, what):
        self.what, self.body = what, body
        self.length = rb.scalar(0, "<q")
        if self.length < 0:
            raise IPCError(f"{what}: a length of {self.length} rows")
        self.nodes = rb.structs(1, "<qq")
        self.buffers = rb.structs(2, "<qq")
        for k, (length, nulls) in enumerate(self.nodes):
            if length < 0 or not 0 <= nulls <= length:
                raise IPCError(f"{what}: field node {k}: {nulls} nulls in {length} values")
        for k, (off, n) in enumerate(self.buffers):
            if off < 0 or n < 0 or off + n > len(body):
                raise IPCError(f"{what}: buffer {k} at bytes {off}..{off + n} of a {len(body)}-byte body")
        self.codec = None
        comp = rb.table(3, f"{what} compression")
        if comp is not None:
            codec, method = comp.scalar(0, "<b"), comp.scalar(1, "<b")
            if codec not in _CODECS or method != 0:
                raise IPCError(f"{what}: compression codec {codec}, method {method}")
            self.codec = codec
        if rb.vector(4, 8)[1]:
            raise IPCError(f"{what}: variadic buffers (views): this reader does not read them")
        self.ni = self.bi = 0

    def node(self, field):
        if self.ni >= len(self.nodes):
            raise IPCError(f"{self.what}: {len(self.nodes)} field nodes, too few for column {field.name!r}")
        self.ni += 1
        return self.nodes[self.ni - 1]

    def buffer(self, field, needed, what):
        """The next buffer, at least needed bytes of it (IPCError when it holds fewer): a view
        of the body, or its decompressed bytes."""
        if self.bi >= len(self.buffers):
            raise IPCError(f"{self.what}: {len(self.buffers)} buffers, too few for column {field.name!r}")
        off, n = self.buffers[self.bi]
        self.bi += 1
        raw = self.body[off:off + n]
        if self.codec is not None and n > 0:
            raw = _decompress(self.codec, raw, needed, f"{self.what}: column {field.name!r} {what}")
        if len(raw) < needed:
            raise IPCError(f"{self.what}: column {field.name!r}: its {what} holds {len(raw)} bytes, {needed} needed")
        return raw

    def skip(self):
        """Passes over a buffer not read (the validity bitmap of a column without nulls)."""
        if self.bi >= len(self.buffers):
            raise IPCError(f"{self.what}: {len(self.buffers)} buffers, too few for the schema's columns")
        self.bi += 1


def _decompress(codec, raw, needed, what):
    """A compressed buffer's first needed bytes (an 8-byte uncompressed length, then an
    LZ4 frame or a ZSTD frame, or the bytes themselves after a length of -1), decompressing
    no more than needed."""
    name, module, deb, pip = _CODECS[codec]
    if len(raw) < 8:
        raise IPCError(f"{what}: a compressed buffer of {len(raw)} bytes")
    size = struct.unpack_from("<q", raw, 0)[0]
    if size == -1:
        return raw[8:]
    if size < 0:
        raise IPCError(f"{what}: an uncompressed length of {size}")
    if size < needed:
        raise IPCError(f"{what}: {size} bytes uncompressed, {needed} needed")
    try:
        if codec == 0:
            import lz4.frame
            d = lz4.frame.LZ4FrameDecompressor()
            out = d.decompress(bytes(raw[8:]), max_length=needed)
        else:
            import zstandard
            reader = zstandard.ZstdDecompressor().stream_reader(bytes(raw[8:]))
            parts, got = [], 0
            while got < needed:
                b = reader.read(needed - got)
                if not b:
                    break
                parts.append(b)
                got += len(b)
            out = b"".join(parts)
    except ImportError:
        raise IPCError(f"{what} is compressed with {name}: reading it needs the {module} module "
                       f"(Debian: apt-get install {deb}; pip install {pip})") from None
    except Exception as e:  # the codec's own errors: lz4's RuntimeError, zstandard.ZstdError
        raise IPCError(f"{what}: {name}: {e}") from None
    if len(out) < needed:
        raise IPCError(f"{what}: {name} gave {len(out)} bytes, {needed} needed")
    return memoryview(out)


def _validity(body, field, length, nulls):
    """The validity of a column's values (True where valid), None when it has no nulls."""
    if nulls == 0:
        body.skip()
        return None
    raw = body.buffer(field, (length + 7) // 8, "validity bitmap")
    bits = np.unpackbits(np.frombuffer(raw, np.uint8, (length + 7) // 8), bitorder="little")[:length].astype(bool)
    if length - int(np.count_nonzero(bits)) != nulls:
        raise IPCError(f"{body.what}: column {field.name!r}: its validity bitmap holds "
                       f"{length - int(np.count_nonzero(bits))} nulls, its field node {nulls}")
    return bits


def _array(raw, dtype, count):
    """count values of dtype from raw, a view when raw's address suits dtype, else a copy."""
    a = np.frombuffer(raw, dtype, count)
    return a if a.flags.aligned else a.copy()


def _offsets(body, field, length, width):
    """A column's length+1 offsets, checked to start at or after 0 and never decrease."""
    dtype = np.dtype(f"<i{width}")
    if length == 0:
        raw = body.buffer(field, 0, "offsets")
        return np.zeros(1, np.int64) if len(raw) < width else _array(raw, dtype, 1).astype(np.int64)
    raw = body.buffer(field, (length + 1) * width, "offsets")
    o = _array(raw, dtype, length + 1)
    if o[0] < 0 or (length and np.any(o[1:] < o[:-1])):
        raise IPCError(f"{body.what}: column {field.name!r}: offsets that start at {int(o[0])} or decrease")
    return o


def _decode(body, field, dicts, depth=0):
    """The next column of body as field describes it."""
    length, nulls = body.node(field)
    valid = _validity(body, field, length, nulls)
    k = field.type_id
    if field.dictionary_id is not None:
        raw = body.buffer(field, length * field.index_dtype.itemsize, "indices")
        if field.dictionary_id not in dicts:
            raise IPCError(f"{body.what}: column {field.name!r} uses dictionary {field.dictionary_id}, which no DictionaryBatch sent")
        return _DictionaryColumn(field, length, valid, _array(raw, field.index_dtype, length), dicts[field.dictionary_id], body.what)
    if field.dtype is not None and k != _BOOL:
        raw = body.buffer(field, length * field.dtype.itemsize, "values")
        return _NumericColumn(field, length, valid, _array(raw, field.dtype, length))
    if k == _BOOL:
        raw = body.buffer(field, (length + 7) // 8, "values")
        bits = np.unpackbits(np.frombuffer(raw, np.uint8, (length + 7) // 8), bitorder="little")[:length]
        return _NumericColumn(field, length, valid, bits.astype(bool))
    if k in _VARIABLE:
        o = _offsets(body, field, length, _VARIABLE[k])
        end = int(o[-1])
        data = body.buffer(field, end, "data")
        return _BinaryColumn(field, length, valid, o, data[:end], k in (_UTF8, _LARGE_UTF8), body.what)
    if k == _FIXED_BINARY:
        if field.size == 0 and length > MAX_EMPTY_VALUE_ROWS:
            raise IPCError(f"{body.what}: column {field.name!r}: {length} values of 0 bytes, above the "
                           f"{MAX_EMPTY_VALUE_ROWS} this reader takes (MAX_EMPTY_VALUE_ROWS)")
        raw = body.buffer(field, length * field.size, "values")
        return _FixedBinaryColumn(field, length, valid, raw[:length * field.size])
    if k in (_LIST, _LARGE_LIST):
        o = _offsets(body, field, length, 4 if k == _LIST else 8)
        child = _decode(body, field.children[0], dicts, depth + 1)
        if int(o[-1]) > child.length:
            raise IPCError(f"{body.what}: column {field.name!r}: offsets up to {int(o[-1])} into {child.length} values")
        return _ListColumn(field, length, valid, o, child, body.what)
    if k == _FIXED_LIST:
        child = _decode(body, field.children[0], dicts, depth + 1)
        if child.length < length * field.size:
            raise IPCError(f"{body.what}: column {field.name!r}: {length} lists of {field.size} in {child.length} values")
        return _FixedListColumn(field, length, valid, child)
    raise IPCError(f"column {field.name!r}: {field.type} is not read")  # Field refuses the rest


class Column:
    """One column of a record batch: field (Field), length, null_count, valid (a bool array,
    True where valid; None when it has no nulls). to_numpy() gives its values."""

    def __init__(self, field, length, valid):
        self.field, self.length, self.valid = field, length, valid
        self.null_count = 0 if valid is None else length - int(np.count_nonzero(valid))

    @property
    def name(self):
        return self.field.name

    @property
    def type(self):
        return self.field.type

    def __len__(self):
        return self.length

    def to_numpy(self):
        """The column's values, rows first (see the module's doc)."""
        raise NotImplementedError

    def _masked(self, values):
        if self.valid is None:
            return values
        mask = ~self.valid.reshape((-1,) + (1,) * (values.ndim - 1))
        mask = np.broadcast_to(mask, values.shape).copy()
        if isinstance(values, np.ma.MaskedArray):
            return np.ma.MaskedArray(values.data, mask=values.mask | mask)
        return np.ma.MaskedArray(values, mask=mask)

    def __repr__(self):
        return f"<Column {self.name!r}: {self.type}, {self.length} rows, {self.null_count} nulls>"


class _NumericColumn(Column):
    def __init__(self, field, length, valid, values):
        super().__init__(field, length, valid)
        self.values = values

    def to_numpy(self):
        return self._masked(self.values)


class _BinaryColumn(Column):
    def __init__(self, field, length, valid, offsets, data, text, what):
        super().__init__(field, length, valid)
        self.offsets, self.data, self.text, self._what = offsets, data, text, what

    def to_numpy(self):
        out = np.empty(self.length, object)
        data, o = bytes(self.data), self.offsets.tolist()
        valid = None if self.valid is None else self.valid.tolist()
        for i in range(self.length):
            if valid is not None and not valid[i]:
                continue  # None
            v = data[o[i]:o[i + 1]]
            if self.text:
                try:
                    v = v.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise IPCError(f"{self._what}: column {self.name!r} row {i} is not UTF-8: {e}") from None
            out[i] = v
        return out


class _FixedBinaryColumn(Column):
    def __init__(self, field, length, valid, data):
        super().__init__(field, length, valid)
        self.data = data

    def to_numpy(self):
        out = np.empty(self.length, object)
        w, data = self.field.size, bytes(self.data)
        for i in range(self.length):
            if self.valid is None or self.valid[i]:
                out[i] = data[i * w:(i + 1) * w]
        return out


def _objects(values):
    """A 1-d object array whose items are the rows of values (each an array)."""
    out = np.empty(len(values), object)
    for i in range(len(values)):
        out[i] = values[i]
    return out


class _ListColumn(Column):
    """A list or large_list column: offsets (length+1) into child, a Column."""

    def __init__(self, field, length, valid, offsets, child, what):
        super().__init__(field, length, valid)
        self.offsets, self.child, self._what = offsets, child, what

    def to_numpy(self):
        if self.field.cell_shape is not None:  # ndarrow's cells of no value: a dense (rows, *cell)
            if int(self.offsets[-1] - self.offsets[0]) != 0 or self.valid is not None:
                raise IPCError(f"{self._what}: column {self.name!r}: {_CELL_SHAPE} {self.field.cell_shape} "
                               f"on rows of {int(self.offsets[-1] - self.offsets[0])} values or nulls")
            dtype = self.child.field.dtype if self.child.field.dtype is not None else object
            return np.empty((self.length, *self.field.cell_shape), dtype)
        values = self.child.to_numpy()
        out = np.empty(self.length, object)
        o = self.offsets.tolist()
        for i in range(self.length):
            if self.valid is None or self.valid[i]:
                out[i] = values[o[i]:o[i + 1]]
        return out


class _FixedListColumn(Column):
    """A fixed_size_list column (a tensor's cells when arrow.fixed_shape_tensor): child, a
    Column of at least length*size values."""

    def __init__(self, field, length, valid, child):
        super().__init__(field, length, valid)
        self.child = child

    def to_numpy(self):
        n, size = self.length, self.field.size
        values = self.child.to_numpy()[:n * size]
        out = values.reshape((n, size) + values.shape[1:])
        f = self.field
        if f.shape is not None:  # arrow.fixed_shape_tensor: physical cells, then logical order
            out = out.reshape((n, *f.physical_shape) + values.shape[1:])
            if f.permutation:
                out = out.transpose([0] + [1 + p for p in f.permutation] + list(range(1 + len(f.shape), out.ndim)))
        elif f.cell_shape is not None:
            out = out.reshape((n, *f.cell_shape) + values.shape[1:])
        return self._masked(out)


class _DictionaryColumn(Column):
    """A dictionary-encoded column: indices into dictionary (the values, decoded: a NumPy
    array), checked to be in range where valid."""

    def __init__(self, field, length, valid, indices, dictionary, what):
        super().__init__(field, length, valid)
        n = len(dictionary)
        idx = indices if valid is None else np.where(valid, indices, 0)
        if length and (n == 0 and (valid is None or valid.any()) or n and (idx.min() < 0 or idx.max() >= n)):
            bad = idx[(idx < 0) | (idx >= n)] if n else idx
            raise IPCError(f"{what}: column {field.name!r}: dictionary index {int(bad[0])} for a dictionary of {n} values")
        self.indices, self.dictionary, self._idx = indices, dictionary, idx

    def to_numpy(self):
        if len(self.dictionary) == 0:
            out = np.empty(self.length, self.dictionary.dtype)
        else:
            out = self.dictionary[self._idx]
        if self.valid is None:
            return out
        if out.dtype == object:
            out = np.array(out, copy=True)
            out[~self.valid] = None
            return out
        return self._masked(out)


class RecordBatch:
    """A record batch: schema (Schema), num_rows, columns (Column, in the schema's order)."""

    def __init__(self, schema, num_rows, columns):
        self.schema, self.num_rows, self.columns = schema, num_rows, columns

    def column(self, key):
        """The column named key, or at index key."""
        if isinstance(key, int):
            return self.columns[key]
        if key not in self.schema.names:
            raise KeyError(f"no column {key!r}: the columns are {self.schema.names}")
        return self.columns[self.schema.names.index(key)]

    def to_numpy(self):
        """{column name: NumPy array} (see the module's doc). Columns of one name are an
        error (a dict holds one)."""
        if len(set(self.schema.names)) != len(self.schema.names):
            raise ValueError(f"columns of the same name: {self.schema.names}: read them with column(i)")
        return {c.name: c.to_numpy() for c in self.columns}

    def __len__(self):
        return self.num_rows

    def __repr__(self):
        return f"<RecordBatch of {self.num_rows} rows: {self.schema}>"


# --- messages ---------------------------------------------------------------------------


class StreamDecoder:
    """Decodes the messages of one Arrow IPC stream in order: a Schema first, then
    DictionaryBatch and RecordBatch messages. add() takes a message's flatbuffer (a
    FlightData's data_header) and body, and returns a RecordBatch, or None for a schema or a
    dictionary. The batches view the bodies' memory where the layout allows."""

    def __init__(self):
        self.schema, self.dictionaries, self.messages = None, {}, 0
        self._value_fields = {}  # dictionary id → the Field of its values

    def add(self, header, body):
        what = f"message {self.messages}"
        self.messages += 1
        header = memoryview(header).cast("B") if not isinstance(header, bytes) else header
        if len(header) < 4:
            raise IPCError(f"{what}: {len(header)} bytes of metadata")
        m = _Table(header, struct.unpack_from("<I", header, 0)[0], what)
        version, kind = m.scalar(0, "<h"), m.scalar(1, "<B")
        if version < _V4:
            raise IPCError(f"{what}: metadata version V{version + 1}: this reader reads V4 and V5")
        t = m.table(2, f"{what} header")
        if t is None:
            raise IPCError(f"{what}: no header")
        if kind == _SCHEMA:
            if self.schema is not None:
                raise IPCError(f"{what}: a second schema")
            self.schema = Schema(t)
            self._dictionary_fields(self.schema.fields)
            return None
        if self.schema is None:
            raise IPCError(f"{what}: a {'record batch' if kind == _RECORD_BATCH else 'message'} before the schema")
        if kind == _DICTIONARY_BATCH:
            self._dictionary(t, body, what)
            return None
        if kind == _RECORD_BATCH:
            b = _Body(t, body, f"{what} (record batch)")
            columns = []
            for f in self.schema.fields:
                c = _decode(b, f, self.dictionaries)
                if c.length != b.length:
                    raise IPCError(f"{b.what}: column {f.name!r} of {c.length} rows in a batch of {b.length}")
                columns.append(c)
            return RecordBatch(self.schema, b.length, columns)
        if kind in (_TENSOR, _SPARSE_TENSOR):
            raise IPCError(f"{what}: a {'Tensor' if kind == _TENSOR else 'SparseTensor'} message: this reader reads record batches")
        raise IPCError(f"{what}: message header type {kind}")

    def _dictionary_fields(self, fields):
        for f in fields:
            if f.dictionary_id is not None:
                v = f.value_field()
                seen = self._value_fields.get(f.dictionary_id)
                if seen is not None and seen.type != v.type:
                    raise IPCError(f"dictionary {f.dictionary_id} of {seen.type} and of {v.type}")
                self._value_fields[f.dictionary_id] = v
            self._dictionary_fields(f.children)

    def _dictionary(self, t, body, what):
        ident, delta = t.scalar(0, "<q"), bool(t.scalar(2, "<B"))
        field = self._value_fields.get(ident)
        if field is None:
            raise IPCError(f"{what}: dictionary {ident}, which no field of the schema uses")
        data = t.table(1, f"{what} data")
        if data is None:
            raise IPCError(f"{what}: dictionary {ident} without data")
        b = _Body(data, body, f"{what} (dictionary {ident})")
        col = _decode(b, field, self.dictionaries)
        if col.length != b.length:
            raise IPCError(f"{b.what}: {col.length} values in a batch of {b.length}")
        values = col.to_numpy()
        if delta:
            if ident not in self.dictionaries:
                raise IPCError(f"{what}: a delta of dictionary {ident} before the dictionary")
            old = self.dictionaries[ident]
            join = np.ma.concatenate if isinstance(old, np.ma.MaskedArray) or isinstance(values, np.ma.MaskedArray) else np.concatenate
            values = join([old, values])
        self.dictionaries[ident] = values


def _read(f, n, what):
    """n bytes of f, read in pieces so that memory grows with what arrives, never with
    what a length claims."""
    buf = bytearray()
    while len(buf) < n:
        b = f.read(min(n - len(buf), _CHUNK))
        if not b:
            raise IPCError(f"the stream ends inside {what}: {len(buf)} of its {n} bytes")
        buf += b
    return buf


def messages(f, max_message_bytes=MAX_MESSAGE_BYTES):
    """The (metadata, body) of each message of the Arrow IPC stream f (a binary file
    object), up to its end-of-stream marker or its end. A stream inside an Arrow IPC file
    (ARROW1) is read as the stream it is."""
    first = True
    index = 0
    while True:
        head = f.read(4)
        if first and head == b"ARRO":
            rest = f.read(4)
            if rest != b"W1\0\0":
                raise IPCError("the input starts with neither an Arrow IPC message nor ARROW1")
            head = f.read(4)
        first = False
        if not head:
            return
        if len(head) < 4:
            raise IPCError(f"the stream ends inside message {index}'s length")
        (n,) = struct.unpack("<I", head)
        if n == _CONTINUATION:
            head = f.read(4)
            if len(head) < 4:
                raise IPCError(f"the stream ends inside message {index}'s length")
            (n,) = struct.unpack("<i", head)
        elif n > 0x7FFFFFFF:
            raise IPCError(f"message {index}: a metadata length of {n}")
        if n == 0:
            return  # end-of-stream
        if n < 0 or n > max_message_bytes:
            raise IPCError(f"message {index}: {n} bytes of metadata, above the {max_message_bytes} this reader takes (max_message_bytes)")
        meta = _read(f, n, f"message {index}'s metadata")
        body_length = _body_length(meta, index)
        if body_length < 0 or n + body_length > max_message_bytes:
            raise IPCError(f"message {index}: a body of {body_length} bytes, above the {max_message_bytes} this reader takes (max_message_bytes)")
        body = _read(f, body_length, f"message {index}'s body")
        yield meta, memoryview(body)
        index += 1


def _body_length(meta, index):
    if len(meta) < 4:
        raise IPCError(f"message {index}: {len(meta)} bytes of metadata")
    m = _Table(meta, struct.unpack_from("<I", meta, 0)[0], f"message {index}")
    return m.scalar(3, "<q")


def read_stream(source, max_message_bytes=MAX_MESSAGE_BYTES):
    """The record batches of an Arrow IPC stream, in order: source is a binary file object
    (sys.stdin.buffer, open(path, "rb")), a path, or bytes. A message larger than
    max_message_bytes is an IPCError before it is read; so is every malformed one."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(source)
    elif isinstance(source, str) or hasattr(source, "__fspath__"):
        with open(source, "rb") as f:
            yield from read_stream(f, max_message_bytes)
        return
    decoder = StreamDecoder()
    for meta, body in messages(source, max_message_bytes):
        batch = decoder.add(meta, body)
        if batch is not None:
            yield batch
    if decoder.schema is None:
        raise IPCError("the stream holds no schema" if decoder.messages == 0 else "the stream ends before its schema")

