// take_lance.mjs: LanceDB's take on issue 36's table, the anchor `ndarrow take` is compared
// with (bench/take.sh runs it). Node packages live outside the repository:
//
//	mkdir -p /tmp/lance && cd /tmp/lance && npm init -y &&
//	  npm install @lancedb/lancedb@0.39.0 apache-arrow@18.1.0
//
// (LanceDB 0.39 declares node >= 22; npm on an older node picks 0.37.1 unless the version is
// given, and 0.39.0 runs on node 20 with an EBADENGINE warning.) LANCE_DIR names another
// install directory.
//
//	node bench/take_lance.mjs load DIR        table.arrow into a Lance table at DIR/lance
//	node bench/take_lance.mjs warm DIR        warm takeOffsets of rows_N.txt, N = 5120, 256, 1:
//	                                          2 warm-ups, then the median of RUNS (21) runs
//	node bench/take_lance.mjs once DIR N      one take of rows_N.txt in a fresh process, timed
//	                                          from the process's start (performance.now())
//
// DIR holds what bench/maketable writes. Each result is a JSON line {what, rows, ms, ...}. Every
// take is checked: each returned label equals the offset asked for at its place, and a few emb
// rows equal table.arrow's (load and warm).
import { createRequire } from "node:module";
import { readFileSync, existsSync, rmSync } from "node:fs";
import path from "node:path";

const lanceDir = process.env.LANCE_DIR || "/tmp/lance";
const require = createRequire(path.join(path.resolve(lanceDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");

const [mode, dir, nArg] = process.argv.slice(2);
if (!["load", "warm", "once"].includes(mode) || !dir || (mode === "once" && !nArg)) {
  console.error("usage: node take_lance.mjs load|warm DIR | once DIR N");
  process.exit(2);
}
const runs = Number(process.env.RUNS || 21);

const out = (o) => console.log(JSON.stringify(o));
const rowsOf = (n) =>
  readFileSync(path.join(dir, `rows_${n}.txt`), "utf8").split("\n").filter((s) => s !== "").map(Number);

// check fails unless the take's labels are the offsets, in the order asked or ascending (LanceDB
// 0.39's takeOffsets returns the rows in file order, whatever the order asked), and (given the
// source table) a few emb rows equal the source's. It returns the order found.
function check(result, asked, source) {
  if (result.numRows !== asked.length) throw new Error(`took ${result.numRows} rows, asked ${asked.length}`);
  const label = result.getChild("label");
  let order = "as asked", offsets = asked;
  if (asked.length > 1 && Number(label.get(0)) !== asked[0]) {
    order = "ascending";
    offsets = [...asked].sort((a, b) => a - b);
  }
  for (let i = 0; i < offsets.length; i++) {
    if (Number(label.get(i)) !== offsets[i]) throw new Error(`row ${i}: label ${label.get(i)}, offset ${offsets[i]} (${order})`);
  }
  if (!source) return order;
  const emb = result.getChild("emb"), src = source.getChild("emb");
  for (const i of [0, offsets.length >> 1, offsets.length - 1]) {
    const got = emb.get(i).toArray(), want = src.get(offsets[i]).toArray();
    if (got.length !== want.length || got.some((v, j) => v !== want[j])) throw new Error(`row ${i} (offset ${offsets[i]}): emb differs`);
  }
  return order;
}

const lancePath = path.join(dir, "lance");
const db = await lancedb.connect(lancePath);

if (mode === "once") {
  const n = Number(nArg);
  const offsets = rowsOf(n);
  const table = await db.openTable("t");
  const result = await table.takeOffsets(offsets).toArrow();
  const ms = performance.now(); // since the process's time origin, its start
  const order = check(result, offsets, null);
  out({ what: "lance take, whole process (node start to result)", rows: n, ms: +ms.toFixed(1), order });
  process.exit(0);
}

let t0 = performance.now();
const source = arrow.tableFromIPC(readFileSync(path.join(dir, "table.arrow")));
const readMs = performance.now() - t0;

let table;
if (mode === "load") {
  if (existsSync(lancePath)) rmSync(lancePath, { recursive: true });
  const db2 = await lancedb.connect(lancePath);
  t0 = performance.now();
  table = await db2.createTable("t", source, { mode: "overwrite" });
  const ms = performance.now() - t0;
  out({ what: "lance load table.arrow", rows: source.numRows, batches: source.batches.length, read_ms: +readMs.toFixed(1), ms: +ms.toFixed(1), rows_counted: await table.countRows() });
  out({ what: "lance schema", schema: String(await table.schema()) });
  process.exit(0);
}

table = await db.openTable("t");
for (const n of [5120, 256, 1]) {
  const offsets = rowsOf(n);
  const times = [];
  let order;
  for (let i = 0; i < 2 + runs; i++) {
    t0 = performance.now();
    const result = await table.takeOffsets(offsets).toArrow();
    const ms = performance.now() - t0;
    if (i === 0) order = check(result, offsets, source);
    if (i >= 2) times.push(ms);
  }
  times.sort((a, b) => a - b);
  out({ what: "lance take, warm (median)", rows: n, ms: +times[times.length >> 1].toFixed(2), min_ms: +times[0].toFixed(2), max_ms: +times[times.length - 1].toFixed(2), runs, order });
}
