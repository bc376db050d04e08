#!/usr/bin/python3
"""Writes expected.jsonl: what each TFRecord file of tensorflow/ holds, read independently of
ndarrow's Go code — framing parsed here, records parsed by the Python protobuf runtime with
TensorFlow's own .proto definitions (tensorflow/core/example/{feature,example}.proto), compiled
with protoc --python_out into the folder given as the first argument.

    /usr/bin/python3 expected.py /tmp/tfproto > expected.jsonl

Per file: the record count; for files of Examples, one object per feature in ndarrow's
inspect --json form (dense when every record holds the same number of values — [records]
when that is one, [records, n] otherwise — else ragged with row splits); sha256 over the flat values in record order, int64 and float32
little-endian, strings as a 4-byte little-endian length and the bytes.
"""
import gzip, hashlib, json, os, struct, sys

sys.path.insert(0, sys.argv[1])
from tensorflow.core.example import example_pb2  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensorflow")


def records(path):
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        out.append(data[off + 12 : off + 12 + n])
        off += 12 + n + 4
    return out


def main():
    for name in ["lingvo_wmt14_ende_wpm_32k_test.tfrecord", "tfx_penguin_eval.tfrecord.gz",
                 "magenta_tfrecord_iterator_test.tfrecord", "lingvo_events.out.tfevents.test"]:
        recs = records(os.path.join(HERE, name))
        base = name.split(".")[0]
        print(json.dumps({"file": name, "records": len(recs), "raw_sha256": [hashlib.sha256(r).hexdigest() for r in recs] if len(recs) < 10 else None}))
        if not name.startswith("lingvo_wmt") and not name.startswith("tfx"):
            continue
        feats = {}
        for i, r in enumerate(recs):
            ex = example_pb2.Example.FromString(r)
            for k, f in ex.features.feature.items():
                kind = f.WhichOneof("kind")
                vals = list(getattr(f, kind).value)
                feats.setdefault(k, (kind, [[] for _ in recs]))[1][i] = vals
        for k in sorted(feats):
            kind, rows = feats[k]
            h = hashlib.sha256()
            for row in rows:
                for v in row:
                    if kind == "int64_list":
                        h.update(struct.pack("<q", v))
                    elif kind == "float_list":
                        h.update(struct.pack("<f", v))
                    else:
                        h.update(struct.pack("<I", len(v)) + v)
            lens = [len(r) for r in rows]
            dtype = {"int64_list": "int64", "float_list": "float32", "bytes_list": "string"}[kind]
            line = {"name": base + "." + k, "column": k, "dtype": dtype, "nnz": sum(lens), "sha256": h.hexdigest()}
            if len(set(lens)) == 1:
                # one value a record: [records], as FixedLenFeature([], dtype) parses it
                line.update(kind="dense", shape=[len(rows)] if lens[0] == 1 else [len(rows), lens[0]])
            else:
                splits = [0]
                for n in lens:
                    splits.append(splits[-1] + n)
                line.update(kind="ragged", shape=[len(rows), -1], nrows=len(rows), nvals=sum(lens), row_splits=[splits])
            print(json.dumps(line))


main()
