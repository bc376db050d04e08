#!/usr/bin/env bash
# take.sh: issue 36's random-row anchor — `ndarrow take` of 5120, 256 and 1 random rows of a
# 262144 x 256 float32 + int64 table, as a whole process, beside LanceDB's take in the same run.
#
#   bench/take.sh [DIR]
#
# Needs go, node, /usr/bin/time (GNU). DIR (default: a new temporary directory, kept) receives the data bench/maketable writes
# (table.arrow: 16 batches of 16384 rows; table_1batch.arrow; table.parquet, uncompressed;
# table_zstd.parquet; rows_N.txt), the Lance table (DIR/lance) and the take outputs; files
# already there are reused (REGEN=1 writes them again). Environment:
#   LANCE_DIR  the npm install of @lancedb/lancedb and apache-arrow (default /tmp/lance; see
#              bench/take_lance.mjs); without it the Lance rows are skipped, and said so
#   NDARROW    an ndarrow binary to time (default: built from this checkout into DIR/bin)
#   REPS       timed runs of each whole process, after one untimed (default 5; the median)
#   RUNS       warm Lance runs (default 21; the median)
#
# Times are wall clock from fork to exit (ms, `date +%s%N`), RSS is /usr/bin/time's maximum
# resident set size, anon is the largest RssAnon of /proc/PID/status seen by polling the
# process in a separate run (a lower bound of its anonymous peak: mapped file pages are not in it).
# Each ndarrow take output is checked (with apache-arrow from LANCE_DIR): its labels must be the
# rows asked, in the order asked. The baseline is reading the whole emb column:
# ndarrow convert --to arrows --tensor T.emb T - >/dev/null. Results: DIR/results.md (and .tsv).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d /tmp/ndarrow-take.XXXXXX)}
mkdir -p "$dir/bin" "$dir/out"
dir=$(cd "$dir" && pwd)
reps=${REPS:-5}
lance_dir=${LANCE_DIR:-/tmp/lance}
export LANCE_DIR=$lance_dir
ns=(5120 256 1)
inputs=(table.arrow table_1batch.arrow table.parquet table_zstd.parquet)
results=$dir/results.tsv
: >"$results"

say() { printf '%s\n' "$*" >&2; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; } # what, rows, ms, maxrss MiB, anon MiB

load0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== data in $dir (load average $load0)"
(cd "$root" && go build -o "$dir/bin/maketable" ./bench/maketable)
if [[ -n ${NDARROW:-} ]]; then
	nd=$NDARROW
else
	nd=$dir/bin/ndarrow
	(cd "$root" && go build -o "$nd" ./cmd/ndarrow)
fi
if [[ ${REGEN:-} == 1 || ! -f $dir/table_zstd.parquet || ! -f $dir/rows_1.txt ]]; then
	t0=$(date +%s%N)
	"$dir/bin/maketable" -dir "$dir" | tee "$dir/maketable.jsonl" >&2
	row "maketable: generate + write 4 files" 262144 $((($(date +%s%N) - t0) / 1000000)) - -
	rm -rf "$dir/lance"
fi
ls -l "$dir"/table* >&2

. "$root/bench/timing.sh"

# Lance
if [[ -f $lance_dir/node_modules/@lancedb/lancedb/package.json ]]; then
	lv=$(node -p "require('$lance_dir/node_modules/@lancedb/lancedb/package.json').version")
	av=$(node -p "require('$lance_dir/node_modules/apache-arrow/package.json').version")
	say "== LanceDB $lv, apache-arrow $av, node $(node --version)"
	if [[ ! -d $dir/lance ]]; then
		node "$root/bench/take_lance.mjs" load "$dir" 2>/dev/null | tee "$dir/lance_load.jsonl" >&2
	fi
	node "$root/bench/take_lance.mjs" warm "$dir" 2>/dev/null | tee "$dir/lance.jsonl" >&2
	while IFS=$'\t' read -r n ms; do
		row "lance $lv take, warm in-process, median of ${RUNS:-21}" "$n" "$ms" - -
	done < <(node -e "
		for (const l of require('fs').readFileSync('$dir/lance.jsonl', 'utf8').split('\n'))
			if (l.includes('take, warm')) { const o = JSON.parse(l); console.log(o.rows + '\t' + o.ms); }")
	for n in "${ns[@]}"; do
		timed "lance $lv take, whole node process" "$n" node "$root/bench/take_lance.mjs" once "$dir" "$n"
	done
	timed "node + require(@lancedb/lancedb) alone" 0 node -e "require('$lance_dir/node_modules/@lancedb/lancedb')"
else
	say "== no LanceDB at $lance_dir (npm install @lancedb/lancedb@0.39.0 apache-arrow@18.1.0 there, see bench/take_lance.mjs): Lance rows skipped"
fi

# ndarrow take
if "$nd" help take >/dev/null 2>&1; then
	for in in "${inputs[@]}"; do
		for n in "${ns[@]}"; do
			out=$dir/out/${in%.*}_$n.arrow
			timed "ndarrow take $in" "$n" "$nd" take --rows "@$dir/rows_$n.txt" "$dir/$in" "$out" || continue
			if [[ -f $lance_dir/node_modules/apache-arrow/package.json ]]; then
				node -e "
					const a = require('$lance_dir/node_modules/apache-arrow'), fs = require('fs');
					const t = a.tableFromIPC(fs.readFileSync('$out'));
					const want = fs.readFileSync('$dir/rows_$n.txt', 'utf8').split('\n').filter(Boolean).map(Number);
					const l = t.getChild('label');
					if (t.numRows !== want.length) throw new Error('rows ' + t.numRows);
					for (let i = 0; i < want.length; i++) if (Number(l.get(i)) !== want[i]) throw new Error('row ' + i + ': label ' + l.get(i) + ', asked ' + want[i]);
				" || say "ndarrow take $in $n: the output's labels are not the rows asked, in order"
			fi
		done
	done
else
	say "== $nd has no take command (yet): ndarrow take rows skipped"
	row "ndarrow take: not in this build" - - - -
fi

# baseline: reading the whole column
for in in table_zstd.parquet table.parquet table.arrow; do
	timed "baseline: ndarrow convert --tensor ${in%.*}.emb $in (whole column, arrows to /dev/null)" 262144 \
		"$nd" convert --to arrows --tensor "${in%.*}.emb" "$dir/$in" -
done

say ""
say "machine: $(nproc) cores, $(uname -sr); $("$nd" version 2>/dev/null | head -1); reps $reps;" \
	"load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end (the numbers mean little above ~1)"
{
	printf '| what | rows | ms | max RSS MiB | anon MiB |\n|---|---:|---:|---:|---:|\n'
	awk -F'\t' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}' "$results"
} | tee "$dir/results.md"
