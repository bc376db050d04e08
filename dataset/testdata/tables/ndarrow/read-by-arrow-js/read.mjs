// Prints what Apache Arrow JS reads of an Arrow IPC file or stream, as JSON: its batches and
// rows, and per column its name, type (Arrow JS's spelling), nullability, field metadata, null
// count and values — int64 as decimal strings, bytes as hex, null as null. Run from a folder
// where `npm install apache-arrow@21.2.0` has been done:
//   node read.mjs FILE > FILE.json
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { tableFromIPC, DataType } from 'apache-arrow';

const path = process.argv[2];
const table = tableFromIPC(readFileSync(path));
const value = (type, v) => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (DataType.isBinary(type) || DataType.isLargeBinary(type) || DataType.isFixedSizeBinary(type)) return Buffer.from(v).toString('hex');
  if (DataType.isFixedSizeList(type) || DataType.isList(type)) return [...v].map((x) => value(type.children[0].type, x));
  if (typeof v === 'number' && Object.is(v, -0)) return '-0';
  return v;
};
const columns = table.schema.fields.map((f, i) => {
  const col = table.getChildAt(i);
  return {
    name: f.name,
    type: String(f.type),
    nullable: f.nullable,
    metadata: Object.fromEntries(f.metadata),
    null_count: col.nullCount,
    values: [...col].map((v) => value(f.type, v)),
  };
});
const head = JSON.stringify({ file: basename(path), batches: table.batches.length, rows: table.numRows });
console.log(`${head.slice(0, -1)},"columns":[\n${columns.map((c) => JSON.stringify(c)).join(',\n')}\n]}`);
