// Writes table.arrow (IPC file) and table.arrows (IPC stream), a table as users have one —
// a tensor column beside plain, string, binary, dictionary and struct columns — and
// expected.jsonl, what a correct reader recovers from them, computed here on the JavaScript
// side from the values written. Run from a folder where `npm install apache-arrow@21.2.0`
// has been done:
//   node generate.mjs OUTDIR
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Field, Schema, Struct, RecordBatch, Table, makeData, vectorFromArray,
  FixedSizeList, Float32, Float64, Int32, Int64, Utf8, Binary, Dictionary,
  RecordBatchFileWriter, RecordBatchStreamWriter,
} from 'apache-arrow';

const out = process.argv[2] || '.';

// emb: an arrow.fixed_shape_tensor of float32, shape [4] (Arrow JS has no extension types:
// the field metadata carries it); the rest plain columns and a struct.
const embType = new FixedSizeList(4, new Field('item', new Float32(), true));
const catType = new Dictionary(new Utf8(), new Int32(), 0);
const sType = new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]);
const schema = new Schema([
  new Field('emb', embType, true, new Map([
    ['ARROW:extension:name', 'arrow.fixed_shape_tensor'],
    ['ARROW:extension:metadata', JSON.stringify({ shape: [4] })],
  ])),
  new Field('label', new Int64(), true),
  new Field('score', new Float64(), true),
  new Field('name', new Utf8(), true),
  new Field('blob', new Binary(), true),
  new Field('cat', catType, true),
  new Field('s', sType, true),
]);

// Every row's values; null where a column has a null row. Labels past 2^53 and below zero,
// names with non-ASCII text, blobs with bytes that are not UTF-8 (and an empty one).
const rows = [
  { label: 0n, score: 0.5, name: 'alpha', blob: [0x00, 0xff], cat: 0 },
  { label: null, score: -1.25, name: 'café', blob: [], cat: 1 },
  { label: 9007199254740993n, score: 1e300, name: '日本語', blob: [0xc3, 0x28], cat: 2 },
  { label: -7n, score: 3.141592653589793, name: null, blob: [0x61, 0x62, 0x63], cat: null },
  { label: 42n, score: 0, name: 'emoji 🙂', blob: [0xfe, 0xfe, 0xfe, 0xfe], cat: 0 },
  { label: -9223372036854775808n, score: -0.0078125, name: '', blob: [0x80], cat: 1 },
  { label: 9223372036854775807n, score: 2.5e-8, name: 'zeta', blob: [0xe2, 0x82, 0xac], cat: 2 },
];
rows.forEach((r, i) => {
  r.emb = Array.from({ length: 4 }, (_, k) => i * 4 + k + 0.25);
  r.s = { a: 100 + i, b: `s${i}` };
});
const categories = vectorFromArray(['red', 'green', 'blue'], new Utf8()); // one dictionary, written once

const batches = [];
for (const [lo, hi] of [[0, 3], [3, 5], [5, 7]]) {
  const part = rows.slice(lo, hi);
  const n = part.length;
  const col = (k) => part.map((r) => r[k]);
  const idx = vectorFromArray(col('cat'), new Int32()).data[0];
  const cat = makeData({ type: catType, length: n, nullCount: idx.nullCount, nullBitmap: idx.nullBitmap, data: idx.values, dictionary: categories });
  const cols = [
    vectorFromArray(col('emb'), embType).data[0],
    vectorFromArray(col('label'), new Int64()).data[0],
    vectorFromArray(col('score'), new Float64()).data[0],
    vectorFromArray(col('name'), new Utf8()).data[0],
    vectorFromArray(col('blob').map((b) => Uint8Array.from(b)), new Binary()).data[0],
    cat,
    vectorFromArray(col('s'), sType).data[0],
  ];
  batches.push(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children: cols })));
}
const table = new Table(schema, batches);
writeFileSync(join(out, 'table.arrow'), RecordBatchFileWriter.writeAll(table).toUint8Array(true));
writeFileSync(join(out, 'table.arrows'), RecordBatchStreamWriter.writeAll(table).toUint8Array(true));

// expected.jsonl: one line per column. A tensor's values are hashed little-endian, row-major;
// a string (or bytes) as its 4-byte little-endian length, then its bytes; a null row as zero,
// or as the empty string. `nulls` lists the null rows; a column with no tensor form is a line
// with `left_out`, its Arrow type as Arrow's ToString spells it (utf8 as arrow-go does).
const sha = (buf) => createHash('sha256').update(buf).digest('hex');
const le = (Arr, vals) => Buffer.from(Arr.from(vals).buffer);
const strings = (vals) => Buffer.concat(vals.map((v) => {
  const b = Buffer.from(v); const n = Buffer.alloc(4); n.writeUInt32LE(b.length); return Buffer.concat([n, b]);
}));
const N = rows.length;
const nullsOf = (k) => rows.flatMap((r, i) => (r[k] === null ? [i] : []));
const dictValues = ['red', 'green', 'blue'];
const plain = (column, dtype, buf, extra = {}) => {
  const nulls = nullsOf(column);
  return { name: `table.${column}`, kind: 'dense', column, dtype, shape: [N], ...(nulls.length ? { nulls } : {}), sha256: sha(buf), ...extra };
};
const lines = [
  { name: 'table.emb', kind: 'fixed_shape_tensor', column: 'emb', dtype: 'float32', shape: [N, 4], sha256: sha(le(Float32Array, rows.flatMap((r) => r.emb))) },
  plain('label', 'int64', le(BigInt64Array, rows.map((r) => r.label ?? 0n))),
  plain('score', 'float64', le(Float64Array, rows.map((r) => r.score))),
  plain('name', 'string', strings(rows.map((r) => r.name ?? ''))),
  plain('blob', 'string', strings(rows.map((r) => Buffer.from(r.blob)))),
  plain('cat', 'string', strings(rows.map((r) => (r.cat === null ? '' : dictValues[r.cat])))),
  { name: 'table.s', column: 's', left_out: 'struct<a: int32, b: utf8>' },
];
writeFileSync(join(out, 'expected.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
