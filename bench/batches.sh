#!/usr/bin/env bash
# batches.sh: issue 37's mini-batch benchmark — `ndarrow batches` of a 512 MiB table of 4
# Parquet parts (524288 rows of emb float32 [256] + label int64), sequential and shuffled, as
# whole processes, beside reading the table whole (`ndarrow convert --to arrows DIR -`) and
# beside the hand-written loop (bench/handloop: row groups shuffled, each read, its rows
# permuted), uncompressed and ZSTD.
#
#   bench/batches.sh [DIR]
#
# Needs go and /usr/bin/time (GNU). DIR (default: a new temporary directory, kept) receives
# DIR/parts and DIR/parts_zstd (bench/maketable -parts 4; reused when there, REGEN=1 writes
# them again), and with ARROW_CPP DIR/parts_cpp: the same parts written by Arrow C++ 17 with
# its defaults (`parquet_golden from-ipc`: ZSTD, dictionary encoding tried first, 1 MiB
# pages, one row group a part). Environment:
#   NDARROW    an ndarrow binary to time (default: built from this checkout into DIR/bin)
#   REPS       timed runs of each whole process, after one untimed (default 5; the median)
#   BATCH      --batch-size (default 256)
#   ARROW_CPP  the bin directory of ../shared/reference/arrow-cpp-17 (optional)
#
# Times are wall clock from fork to exit (ms), RSS is /usr/bin/time's maximum resident set
# size (mapped file pages included), anon the largest RssAnon of /proc/PID/status seen by
# polling the process in a separate run (a lower bound of its anonymous peak). Every output
# goes to /dev/null. Results: DIR/results.md (and .tsv).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d /tmp/ndarrow-batches.XXXXXX)}
mkdir -p "$dir/bin" "$dir/out"
dir=$(cd "$dir" && pwd)
reps=${REPS:-5}
batch=${BATCH:-256}
results=$dir/results.tsv
: >"$results"

say() { printf '%s\n' "$*" >&2; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; } # what, input, ms, maxrss MiB, anon MiB

load0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== data in $dir (load average $load0)"
(cd "$root" && go build -o "$dir/bin/maketable" ./bench/maketable && go build -o "$dir/bin/handloop" ./bench/handloop)
if [[ -n ${NDARROW:-} ]]; then
	nd=$NDARROW
else
	nd=$dir/bin/ndarrow
	(cd "$root" && go build -o "$nd" ./cmd/ndarrow)
fi
if [[ ${REGEN:-} == 1 || ! -f $dir/parts_zstd/part-3.parquet ]]; then
	"$dir/bin/maketable" -dir "$dir" -rows 524288 -parts 4 | tee "$dir/maketable.jsonl" >&2
fi
inputs=(parts parts_zstd)
if [[ -n ${ARROW_CPP:-} ]]; then
	if [[ ${REGEN:-} == 1 || ! -f $dir/parts_cpp/part-3.parquet ]]; then
		mkdir -p "$dir/ipc" "$dir/parts_cpp"
		for p in "$dir"/parts/part-*.parquet; do
			b=$(basename "$p" .parquet)
			"$nd" convert "$p" "$dir/ipc/$b.arrow"
			"$ARROW_CPP/parquet_golden" from-ipc "$dir/ipc/$b.arrow" "$dir/parts_cpp/$b.parquet" >&2
		done
	fi
	inputs+=(parts_cpp)
fi
ls -l "${inputs[@]/#/$dir/}" >&2

. "$root/bench/timing.sh"

for in in "${inputs[@]}"; do
	timed "baseline: ndarrow convert --to arrows DIR -" "$in" "$nd" convert --to arrows "$dir/$in" -
	timed "ndarrow batches --batch-size $batch DIR -" "$in" "$nd" batches --batch-size "$batch" "$dir/$in" -
	timed "ndarrow batches --batch-size $batch --shuffle 1 DIR -" "$in" "$nd" batches --batch-size "$batch" --shuffle 1 "$dir/$in" -
	if [[ $in != parts_cpp ]]; then # a pass over the table for each of its 2048 batches: hours
		timed "ndarrow batches --batch-size $batch --shuffle 1 --page-cache 0 DIR - (each page decompressed as each batch needs it)" "$in" "$nd" batches --batch-size "$batch" --shuffle 1 --page-cache 0 "$dir/$in" -
	fi
	timed "hand-written loop: bench/handloop -batch $batch DIR (row groups shuffled, rows permuted within each)" "$in" "$dir/bin/handloop" -batch "$batch" -seed 1 "$dir/$in"
done

say ""
say "machine: $(nproc) cores, $(uname -sr); $("$nd" version 2>/dev/null | head -1); reps $reps;" \
	"load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end (the numbers mean little above ~1)"
{
	printf '| what | input | ms | × convert | max RSS MiB | anon MiB |\n|---|---|---:|---:|---:|---:|\n'
	awk -F'\t' '$1 ~ /^baseline/ {base[$2]=$3} {r = ($3+0 > 0 && base[$2] > 0) ? sprintf("%.2f", $3/base[$2]) : "-"; printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, r, $4, $5}' "$results"
} | tee "$dir/results.md"
