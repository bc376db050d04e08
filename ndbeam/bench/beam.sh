#!/usr/bin/env bash
# beam.sh: issue 38's benchmark — the example pipeline (ndbeam/examples/convert) on Prism,
# in one process, converting the 512 MiB table of bench/batches.sh (4 Parquet parts of 524288
# rows of emb float32 [256] + label int64) to Parquet parts, beside `ndarrow convert` of the
# same table to one Parquet file (the engine's cost on one machine); and reading the table
# with ndbeam.Read (bench/count) beside Beam's own parquetio (bench/parquetio), label alone and
# every column. Whole processes, median of REPS after one untimed run; RSS is the maximum
# resident set (mapped file pages included), anon the largest RssAnon seen.
#
#   ndbeam/bench/beam.sh DIR        # DIR holds parts/ (bench/maketable -dir DIR -rows 524288 -parts 4)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
dir=$(cd "${1:?DIR}" && pwd)
reps=${REPS:-5}
mkdir -p "$dir/bin" "$dir/out"
results=$dir/beam-results.tsv
: >"$results"
say() { printf '%s\n' "$*" >&2; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; }
(cd "$root" && go build -o "$dir/bin/ndarrow" ./cmd/ndarrow)
(cd "$here" && go build -o "$dir/bin/convert" ./examples/convert && go build -o "$dir/bin/count" ./bench/count &&
	go build -o "$dir/bin/parquetio" ./bench/parquetio)
. "$root/bench/timing.sh"
export TMPDIR=$dir/out
in=$dir/parts
clean() { rm -rf "$dir/out/pipeline" "$dir/out/one.parquet" "$dir"/out/beamloopbackworker-*; }
timed_clean() { clean; timed "$@"; clean; }
# timed runs the command REPS+2 times; the outputs must not exist before each run.
timed "ndarrow convert DIR one.parquet" parts sh -c "rm -f '$dir/out/one.parquet'; exec '$dir/bin/ndarrow' convert '$in' '$dir/out/one.parquet'"
timed "examples/convert --format parquet (Prism, in process)" parts sh -c "rm -rf '$dir/out/pipeline'; exec '$dir/bin/convert' --input '$in' --output '$dir/out/pipeline' --format parquet --runner=prism"
timed "bench/count: ndbeam.Read, label" parts "$dir/bin/count" --input "$in" --columns label --runner=prism
timed "bench/parquetio: Beam's parquetio, label" parts "$dir/bin/parquetio" --input "$in/*.parquet" --runner=prism
timed "bench/count: ndbeam.Read, every column" parts "$dir/bin/count" --input "$in" --runner=prism
clean
say "machine: $(nproc) cores, $(uname -sr); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| what | input | ms | max RSS MiB | anon MiB |\n|---|---|---:|---:|---:|\n'
awk -F'\t' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}' "$results"
