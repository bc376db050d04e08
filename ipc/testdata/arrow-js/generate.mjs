// Writes the Arrow JS test files of this folder and expected.jsonl, what a correct reader
// recovers from them, computed here on the JavaScript side. Run from a folder where
// `npm install apache-arrow` has been done:
//   node generate.mjs OUTDIR
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Field, Schema, Struct, RecordBatch, Table, makeData, vectorFromArray,
  FixedSizeList, List, Float32, Float64, Int32, Int64, Utf8,
  RecordBatchFileWriter, RecordBatchStreamWriter,
} from 'apache-arrow';

const out = process.argv[2] || '.';
const tensorMeta = (shape, dimNames) => new Map([
  ['ARROW:extension:name', 'arrow.fixed_shape_tensor'],
  ['ARROW:extension:metadata', JSON.stringify(dimNames ? { shape, dim_names: dimNames } : { shape })],
]);
const item = (t) => new Field('item', t, true);

// Three batches of rows: images (a fixed_shape_tensor [2,3] of float32), nested
// (list<list<int32>>), tokens (list<float64> with null rows), ids and labels (not tensors).
const imagesType = new FixedSizeList(6, item(new Float32()));
const nestedType = new List(item(new List(item(new Int32()))));
const tokensType = new List(item(new Float64()));
const schema = new Schema([
  new Field('images', imagesType, true, tensorMeta([2, 3], ['h', 'w'])),
  new Field('nested', nestedType, true),
  new Field('tokens', tokensType, true),
  new Field('ids', new Int64(), true),
  new Field('labels', new Utf8(), true),
]);

const batches = [];
const all = { images: [], nested: [], tokens: [], ids: [], labels: [] };
let row = 0;
for (const n of [5, 3, 4]) {
  const images = [], nested = [], tokens = [], ids = [], labels = [];
  for (let i = 0; i < n; i++, row++) {
    images.push(Array.from({ length: 6 }, (_, k) => row * 10 + k + 0.5));
    nested.push(Array.from({ length: row % 3 }, (_, j) => Array.from({ length: (row + j) % 4 }, (_, k) => row * 100 + j * 10 + k)));
    tokens.push(row % 4 === 2 ? null : Array.from({ length: row % 5 }, (_, k) => row + k / 8));
    ids.push(BigInt(row));
    labels.push(`row ${row}`);
  }
  all.images.push(...images); all.nested.push(...nested); all.tokens.push(...tokens);
  all.ids.push(...ids); all.labels.push(...labels);
  const cols = [
    vectorFromArray(images, imagesType), vectorFromArray(nested, nestedType),
    vectorFromArray(tokens, tokensType), vectorFromArray(ids, new Int64()), vectorFromArray(labels, new Utf8()),
  ];
  const data = makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children: cols.map((c) => c.data[0]) });
  batches.push(new RecordBatch(schema, data));
}
const table = new Table(schema, batches);
writeFileSync(join(out, 'tensors.arrow'), RecordBatchFileWriter.writeAll(table).toUint8Array(true));
writeFileSync(join(out, 'tensors.arrows'), RecordBatchStreamWriter.writeAll(table).toUint8Array(true));

// A fixed_shape_tensor column with a null row, and one with a null element: a reader must
// refuse them rather than read zeros.
const nullRow = new Schema([new Field('masked', imagesType, true, tensorMeta([2, 3]))]);
const rows = [[1, 2, 3, 4, 5, 6], null, [7, 8, 9, 10, 11, 12]];
writeFileSync(join(out, 'null_row.arrows'), RecordBatchStreamWriter.writeAll(new Table(nullRow, [
  new RecordBatch(nullRow, makeData({ type: new Struct(nullRow.fields), length: 3, nullCount: 0, children: [vectorFromArray(rows, imagesType).data[0]] })),
])).toUint8Array(true));
const elems = [[1, 2, 3, 4, 5, 6], [1, 2, null, 4, 5, 6]];
writeFileSync(join(out, 'null_element.arrows'), RecordBatchStreamWriter.writeAll(new Table(nullRow, [
  new RecordBatch(nullRow, makeData({ type: new Struct(nullRow.fields), length: 2, nullCount: 0, children: [vectorFromArray(elems, imagesType).data[0]] })),
])).toUint8Array(true));

// expected.jsonl: the fields `ndarrow inspect --json` prints, from the values above. Values
// are hashed as inspect hashes them: little-endian, row-major; ragged ones flat; a string as
// its 4-byte little-endian length, then its UTF-8 bytes.
const sha = (buf) => createHash('sha256').update(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)).digest('hex');
const splits = (rows) => { const s = [0]; for (const r of rows) s.push(s[s.length - 1] + (r ? r.length : 0)); return s; };
const lines = [];
for (const base of ['tensors']) {
  lines.push({ name: `${base}.images`, kind: 'fixed_shape_tensor', column: 'images', dtype: 'float32', shape: [row, 2, 3],
    dim_names: ['', 'h', 'w'], nnz: row * 6, sha256: sha(Float32Array.from(all.images.flat())) });
  const outer = all.nested, inner = outer.flat();
  lines.push({ name: `${base}.nested`, kind: 'ragged', column: 'nested', dtype: 'int32', shape: [row, -1, -1], dim_names: [],
    nnz: inner.flat().length, sha256: sha(Int32Array.from(inner.flat())), nrows: row, nvals: inner.flat().length,
    row_splits: [splits(outer), splits(inner)] });
  const tok = all.tokens;
  lines.push({ name: `${base}.tokens`, kind: 'ragged', column: 'tokens', dtype: 'float64', shape: [row, -1], dim_names: [],
    nnz: tok.flat().filter((x) => x !== null).length, sha256: sha(Float64Array.from(tok.flat().filter((x) => x !== null))),
    nrows: row, nvals: tok.flat().filter((x) => x !== null).length, row_splits: [splits(tok)] });
  // The plain columns: tensors of one value per row.
  lines.push({ name: `${base}.ids`, kind: 'dense', column: 'ids', dtype: 'int64', shape: [row], dim_names: [],
    nnz: row, sha256: sha(BigInt64Array.from(all.ids)) });
  const strings = Buffer.concat(all.labels.map((s) => {
    const b = Buffer.from(s, 'utf8'); const n = Buffer.alloc(4); n.writeUInt32LE(b.length); return Buffer.concat([n, b]);
  }));
  lines.push({ name: `${base}.labels`, kind: 'dense', column: 'labels', dtype: 'string', shape: [row], dim_names: [],
    nnz: row, sha256: sha(strings) });
}
writeFileSync(join(out, 'expected.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
