#!/usr/bin/python3
"""Reads the TFRecord files ndarrow wrote (see ../../written_test.go) without ndarrow: the
framing parsed here with both masked CRC-32C checksums verified, the records parsed by
Python's protobuf runtime with TensorFlow's own .proto definitions
(tensorflow/core/example/{feature,example}.proto, tensorflow/core/framework/{tensor,
tensor_shape,types}.proto), compiled by protoc --python_out into the folder given first;
tensor_content read with NumPy.

    /usr/bin/python3 check.py /tmp/tfproto > python-read.jsonl
"""
import gzip, json, os, struct, sys

import numpy as np

sys.path.insert(0, sys.argv[1])
from tensorflow.core.example import example_pb2  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, and TensorFlow's mask.
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(b):
    c = crc32c(b)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    off = 0
    while off < len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        (lcrc,) = struct.unpack_from("<I", data, off + 8)
        assert lcrc == masked(data[off : off + 8]), "length CRC"
        rec = data[off + 12 : off + 12 + n]
        (dcrc,) = struct.unpack_from("<I", data, off + 12 + n)
        assert dcrc == masked(rec), "data CRC"
        yield rec
        off += 16 + n


NUMPY = {"DT_FLOAT": "<f4", "DT_DOUBLE": "<f8", "DT_HALF": "<f2", "DT_INT8": "<i1", "DT_INT16": "<i2",
         "DT_INT32": "<i4", "DT_INT64": "<i8", "DT_UINT8": "<u1", "DT_UINT16": "<u2", "DT_UINT32": "<u4",
         "DT_UINT64": "<u8", "DT_BOOL": "?"}


def main():
    for name in ["examples.tfrecord", "examples.tfrecord.gz"]:
        for i, r in enumerate(records(os.path.join(HERE, name))):
            ex = example_pb2.Example.FromString(r)
            feats = {}
            for k, f in sorted(ex.features.feature.items()):
                kind = f.WhichOneof("kind")
                vals = list(getattr(f, kind).value)
                if kind == "bytes_list":
                    vals = [v.hex() for v in vals]
                feats[k] = {"kind": kind, "values": vals}
            print(json.dumps({"file": name, "record": i, "features": feats}))
    for i, r in enumerate(records(os.path.join(HERE, "tensors.tfrecord"))):
        tp = tensor_pb2.TensorProto.FromString(r)
        dtype = types_pb2.DataType.Name(tp.dtype)
        shape = [d.size for d in tp.tensor_shape.dim]
        if dtype == "DT_STRING":
            vals = [v.hex() for v in tp.string_val]
        else:
            vals = np.frombuffer(tp.tensor_content, dtype=NUMPY[dtype]).tolist()
            assert len(vals) == int(np.prod(shape)), "tensor_content holds the shape's elements"
        print(json.dumps({"file": "tensors.tfrecord", "record": i, "dtype": dtype, "shape": shape,
                          "names": [d.name for d in tp.tensor_shape.dim], "values": vals}))


main()
