#!/usr/bin/env bash
# wholecolumn.sh: issue 40's whole-column benchmark (BENCHMARKS.md, "A whole tensor column,
# whole process") — the 256 MiB float32 [262144, 256] column emb beside an int64 label, in an
# uncompressed Parquet file, converted to an Arrow IPC stream by the whole ndarrow process
# (`ndarrow convert --to arrows F OUT`), beside Arrow C++ 17 reading the file into a table
# (`parquet_bench read F 0`: its timed part alone, best of 3) and beside copying the file to
# the same output.
#
#   bench/wholecolumn.sh [DIR]
#
# Needs go and /usr/bin/time (GNU). DIR (default: a new temporary directory, kept) receives
# table.parquet (bench/maketable: ndarrow's writer, three row groups; reused when there, REGEN=1
# writes it again) and, with ARROW_CPP, cpp_none.parquet (`parquet_bench write table.arrow
# cpp_none.parquet none 131072`: Arrow C++ 17's writer, two row groups of 128 MiB). Each file
# goes to three outputs:
#   a file      DIR/out/x.arrows, beside `cp F DIR/out/x.copy`
#   a pipe      `| cat > /dev/null`, beside `cat F | cat > /dev/null`
#   /dev/null   beside `cp F /dev/null`. This reads nothing: convert writes the values from the
#               mapped file with write(2), which for /dev/null never touches the pages — its
#               time is the process's cost around a read, not a read, while cp (read(2) into
#               its buffer) does read the file. Its rows count toward no target.
# Before each run the output is removed and `sync` run; ndarrow's runs and the copy's
# alternate. Environment:
#   NDARROW         an ndarrow binary to time (default: built from this checkout into DIR/bin)
#   NDARROW_BEFORE  another ndarrow binary timed beside it (an older main, say), optional
#   ARROW_CPP       the bin directory of ../shared/reference/arrow-cpp-17 (optional)
#   REPS            runs of each command (default 5)
#
# Seconds are wall clock from fork to exit (min–max and median of REPS), MB the largest max
# resident set size (/usr/bin/time; the file's mapped pages included); the ratios are of
# medians (Arrow C++'s: its best of 3). Results: DIR/results.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d /tmp/ndarrow-wholecolumn.XXXXXX)}
mkdir -p "$dir/bin" "$dir/out"
dir=$(cd "$dir" && pwd)
reps=${REPS:-5}
results=$dir/results.md

say() { printf '%s\n' "$*" >&2; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== data in $dir (load average $load0)"
if [[ -n ${NDARROW:-} ]]; then
	nd=$NDARROW
else
	nd=$dir/bin/ndarrow
	(cd "$root" && go build -o "$nd" ./cmd/ndarrow)
fi
if [[ ${REGEN:-} == 1 || ! -f $dir/table.parquet ]]; then
	(cd "$root" && go run ./bench/maketable -dir "$dir" -takes 1) >&2
fi
files=(table.parquet)
if [[ -n ${ARROW_CPP:-} ]]; then
	if [[ ${REGEN:-} == 1 || ! -f $dir/cpp_none.parquet ]]; then
		"$ARROW_CPP/parquet_bench" write "$dir/table.arrow" "$dir/cpp_none.parquet" none 131072 >&2
	fi
	files=(cpp_none.parquet table.parquet)
fi
ls -l "${files[@]/#/$dir/}" >&2

# run OUT CMD...: one run of CMD (a shell command line) after removing OUT and syncing; appends
# "seconds maxrss-KB" to $dir/out/runs.
run() {
	local out=$1
	shift
	[[ $out == /dev/null ]] || rm -f "$out"
	sync
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$dir/out/rss" bash -c "$*" 2>"$dir/out/err" || { say "failed: $* : $(cat "$dir/out/err")"; exit 1; }
	t1=$(date +%s%N)
	echo "$(awk -v n=$((t1 - t0)) 'BEGIN{printf "%.3f", n/1e9}') $(tail -1 "$dir/out/rss")" >>"$dir/out/runs.$RUNKEY"
}

# stats KEY: "min–max s (median m)" of the runs of KEY, and the largest max RSS in MB.
stats() {
	local f=$dir/out/runs.$1
	sort -n "$f" | awk '{t[NR]=$1; if ($2>r) r=$2} END {printf "%s–%s s (median %s)\t%d MB\n", t[1], t[NR], t[int((NR+1)/2)], r/1000}'
}
median_of() { sort -n "$dir/out/runs.$1" | awk '{t[NR]=$1} END {print t[int((NR+1)/2)]}'; }

rm -f "$dir"/out/runs.*
declare -A cpp
for f in "${files[@]}"; do
	in=$dir/$f
	if [[ -n ${ARROW_CPP:-} ]]; then
		line=$("$ARROW_CPP/parquet_bench" read "$in" 0 2>&1 | tail -1) # {"op":"read",…,"seconds":S,…}
		say "Arrow C++ 17 read $f: $line"
		cpp[$f]=$(sed -E 's/.*"seconds":([0-9.]+).*/\1/' <<<"$line")
	fi
	"$nd" convert --to arrows "$in" "$dir/out/warm.arrows" && rm -f "$dir/out/warm.arrows" # one untimed run
	for ((i = 0; i < reps; i++)); do
		RUNKEY="$f.file.nd" run "$dir/out/x.arrows" "'$nd' convert --to arrows '$in' '$dir/out/x.arrows'"
		RUNKEY="$f.file.cp" run "$dir/out/x.copy" "cp '$in' '$dir/out/x.copy'"
		if [[ -n ${NDARROW_BEFORE:-} ]]; then
			RUNKEY="$f.file.before" run "$dir/out/x.arrows" "'$NDARROW_BEFORE' convert --to arrows '$in' '$dir/out/x.arrows'"
		fi
		RUNKEY="$f.pipe.nd" run /dev/null "'$nd' convert --to arrows '$in' - | cat > /dev/null"
		RUNKEY="$f.pipe.cp" run /dev/null "cat '$in' | cat > /dev/null"
		RUNKEY="$f.null.nd" run /dev/null "'$nd' convert --to arrows '$in' /dev/null"
		RUNKEY="$f.null.cp" run /dev/null "cp '$in' /dev/null"
		if [[ -n ${NDARROW_BEFORE:-} ]]; then
			RUNKEY="$f.null.before" run /dev/null "'$NDARROW_BEFORE' convert --to arrows '$in' /dev/null"
		fi
	done
	rm -f "$dir/out/x.arrows" "$dir/out/x.copy"
done

{
	echo "ndarrow convert --to arrows F OUT, $reps runs each; $(nproc) cores, $(uname -sr);" \
		"load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	echo
	echo "| file | output | Arrow C++ 17 read (best of 3) | ndarrow before | ndarrow | max RSS | copy (cp, cat) | ndarrow ÷ copy | Arrow C++ ÷ ndarrow |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for f in "${files[@]}"; do
		for o in file pipe null; do
			what=$o
			case $o in
			file) what="a file" ;;
			pipe) what="a pipe (\`\\| cat > /dev/null\`)" ;;
			null) what="\`/dev/null\` — reads nothing" ;;
			esac
			before=
			[[ -f $dir/out/runs.$f.$o.before ]] && before=$(stats "$f.$o.before" | cut -f1)
			IFS=$'\t' read -r nds ndr < <(stats "$f.$o.nd")
			cps=$(stats "$f.$o.cp" | cut -f1)
			nd_median=$(median_of "$f.$o.nd")
			ratio=$(awk -v a="$nd_median" -v b="$(median_of "$f.$o.cp")" 'BEGIN{printf "%.1f×", a/b}')
			vs=
			[[ -n ${cpp[$f]:-} ]] && vs=$(awk -v a="${cpp[$f]}" -v b="$nd_median" 'BEGIN{printf "%.1f×", a/b}')
			echo "| $f | $what | ${cpp[$f]:+${cpp[$f]} s} | $before | $nds | $ndr | $cps | $ratio | $vs |"
		done
	done
} >"$results"
cat "$results"
