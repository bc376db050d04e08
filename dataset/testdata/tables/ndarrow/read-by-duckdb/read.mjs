// Prints what DuckDB reads of a Parquet file, as JSON: its version, DESCRIBE's column types,
// typeof() of each column on every row, and the rows in file order — BIGINT as decimal
// strings, BLOB as hex (DuckDB's hex()), NULL as null. Run from a folder where
// `npm install @duckdb/node-api` has been done:
//   node read.mjs FILE > FILE.json
import { basename } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const path = process.argv[2];
const conn = await (await DuckDBInstance.create(':memory:')).connect();
const rows = async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJson();
const file = `read_parquet('${path.replaceAll("'", "''")}', file_row_number = true)`;
const version = (await rows('SELECT version() AS v'))[0].v;
const describe = (await rows(`DESCRIBE SELECT * EXCLUDE (file_row_number) FROM ${file}`))
  .map((r) => ({ column: r.column_name, type: r.column_type }));
const types = await rows(`SELECT DISTINCT ${describe.map((d) => `typeof("${d.column}") AS "${d.column}"`).join(', ')} FROM ${file}`);
const values = await rows(`SELECT ${describe.map((d) => (d.type === 'BLOB' ? `hex("${d.column}") AS "${d.column}"` : `"${d.column}"`)).join(', ')}
  FROM ${file} ORDER BY file_row_number`);
const head = JSON.stringify({ file: basename(path), duckdb: version, describe, typeof: types });
console.log(`${head.slice(0, -1)},"rows":[\n${values.map((r) => JSON.stringify(r)).join(',\n')}\n]}`);
