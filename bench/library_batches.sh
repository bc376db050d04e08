#!/usr/bin/env bash
# library_batches.sh: issue 45's item 6 — a shuffled epoch (batches of 256) of the 512 MiB ZSTD
# table of bench/batches.sh (DIR/parts_zstd: 4 Parquet parts, 524288 rows of emb float32 [256]
# + label) through Go's table.Open + Batches with the library's defaults
# (BenchmarkShuffledEpoch/default in table/bench_test.go), beside `ndarrow batches --batch-size
# 256 --shuffle 1 DIR -`, in the same run; and the library with Options.NoPageCache, its
# default before.
#
#   bench/library_batches.sh [DIR]
#
# Needs go and /usr/bin/time (GNU). DIR (default: a new temporary directory, kept) receives
# DIR/parts_zstd (bench/maketable -parts 4; reused when there, REGEN=1 writes it again).
# Environment: NDARROW (an ndarrow binary; default built from this checkout), REPS (timed
# runs of each whole process after one untimed, default 5; the median).
#
# Each row is a whole process, timed as bench/batches.sh times them (bench/timing.sh): wall
# clock from fork to exit (the median of REPS), max RSS (/usr/bin/time, mapped file pages
# included), anon the largest RssAnon seen polling /proc in one more run. The two compared run
# in turn, rep by rep. The library's process is the test binary running the benchmark once
# (-test.benchtime 1x: open, one epoch, release); its own ms/epoch, from -test.benchtime 3x,
# is printed after. Results: DIR/library_results.md (and .tsv).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d /tmp/ndarrow-library-batches.XXXXXX)}
mkdir -p "$dir/bin" "$dir/out"
dir=$(cd "$dir" && pwd)
reps=${REPS:-5}
results=$dir/library_results.tsv
: >"$results"

say() { printf '%s\n' "$*" >&2; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; } # what, input, ms, maxrss MiB, anon MiB

load0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== data in $dir (load average $load0)"
(cd "$root" && go build -o "$dir/bin/maketable" ./bench/maketable && go test -c -o "$dir/bin/table.test" ./table)
if [[ -n ${NDARROW:-} ]]; then
	nd=$NDARROW
else
	nd=$dir/bin/ndarrow
	(cd "$root" && go build -o "$nd" ./cmd/ndarrow)
fi
if [[ ${REGEN:-} == 1 || ! -f $dir/parts_zstd/part-3.parquet ]]; then
	"$dir/bin/maketable" -dir "$dir" -rows 524288 -parts 4 | tee "$dir/maketable.jsonl" >&2
fi

. "$root/bench/timing.sh"

in=parts_zstd
nd_cmd=("$nd" batches --batch-size 256 --shuffle 1 "$dir/$in" -)
go_cmd=(env "NDARROW_BENCH_TABLE=$dir/$in" "$dir/bin/table.test" -test.run '^$' -test.bench 'BenchmarkShuffledEpoch/default$' -test.benchtime 1x)
nocache_cmd=(env "NDARROW_BENCH_TABLE=$dir/$in" "$dir/bin/table.test" -test.run '^$' -test.bench 'BenchmarkShuffledEpoch/no_page_cache$' -test.benchtime 1x)

# The two compared are run in turn, rep by rep (one untimed round first), so that the load of
# a shared machine falls on both alike; then each once more for its anonymous peak.
declare -A ms rss
for k in nd go; do ms[$k]="" rss[$k]=0; done
for ((i = 0; i <= reps; i++)); do
	for k in nd go; do
		declare -n cmd=${k}_cmd
		t0=$(date +%s%N)
		/usr/bin/time -f %M -o "$dir/out/rss" "${cmd[@]}" >/dev/null 2>>"$dir/out/err" || { say "$k failed: $(tail -5 "$dir/out/err")"; exit 1; }
		t=$((($(date +%s%N) - t0) / 100000))
		((i == 0)) && continue
		ms[$k]+="$t "
		r=$(tail -1 "$dir/out/rss")
		((r > rss[$k])) && rss[$k]=$r
	done
done
for k in nd go; do
	declare -n cmd=${k}_cmd
	med=$(printf '%s\n' ${ms[$k]} | median)
	name=$([[ $k == nd ]] && echo "ndarrow batches --batch-size 256 --shuffle 1 DIR -" || echo "Go: table.Open(DIR, table.Options{}) + Batches(Size 256, Shuffle, Seed 1): BenchmarkShuffledEpoch/default, one epoch")
	row "$name" "$in" "$(awk -v x="$med" 'BEGIN{printf "%.1f", x/10}')" $((rss[$k] / 1024)) "$(anon_peak "${cmd[@]}")"
	say "$name: ${ms[$k]}(0.1 ms)"
done
reps=1 timed "Go: the same with table.Options{NoPageCache: true}, one run" "$in" "${nocache_cmd[@]}"

say ""
say "== the benchmark's own timing (open, epoch, release), -test.benchtime 3x"
env "NDARROW_BENCH_TABLE=$dir/$in" "$dir/bin/table.test" -test.run '^$' -test.bench 'BenchmarkShuffledEpoch/default$' -test.benchtime 3x | tee "$dir/out/bench.txt" >&2
say ""
say "machine: $(nproc) cores, $(uname -sr); $("$nd" version 2>/dev/null | head -1); reps $reps;" \
	"load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end (the numbers mean little above ~1)"
{
	printf '| what | input | ms | × ndarrow batches | max RSS MiB | anon MiB |\n|---|---|---:|---:|---:|---:|\n'
	awk -F'\t' 'NR == 1 {base=$3} {r = ($3+0 > 0 && base > 0) ? sprintf("%.2f", $3/base) : "-"; printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, r, $4, $5}' "$results"
} | tee "$dir/library_results.md"
