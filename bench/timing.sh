# timing.sh: what bench/take.sh and bench/batches.sh share, sourced by both: the median of
# numbers, a whole process timed REPS times, its anonymous memory peak. They need say, row,
# $dir (with out/) and $reps from the script.

# median of numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# timed NAME WHAT CMD...: REPS whole-process runs after one untimed; the median wall time, the
# largest max RSS, then one polled run for the anonymous peak.
timed() {
	local name=$1 in=$2
	shift 2
	"$@" >/dev/null 2>"$dir/out/err" || { say "$name: failed: $(cat "$dir/out/err")"; row "$name" "$in" failed - -; return 1; }
	local ms=() rss=0 i t0 r
	for ((i = 0; i < reps; i++)); do
		t0=$(date +%s%N)
		/usr/bin/time -f %M -o "$dir/out/rss" "$@" >/dev/null 2>>"$dir/out/err"
		ms+=($((($(date +%s%N) - t0) / 100000)))
		r=$(tail -1 "$dir/out/rss")
		((r > rss)) && rss=$r
	done
	local med
	med=$(printf '%s\n' "${ms[@]}" | median)
	row "$name" "$in" "$(awk -v x="$med" 'BEGIN{printf "%.1f", x/10}')" $((rss / 1024)) "$(anon_peak "$@")"
	say "$name $in: ${ms[*]} (0.1 ms)"
}

# anon_peak CMD...: runs CMD once, polling its RssAnon; prints the largest seen, in MiB.
anon_peak() {
	"$@" >/dev/null 2>&1 &
	local pid=$! peak=0 k v _
	while [[ -e /proc/$pid/status ]]; do
		while read -r k v _; do
			[[ $k == RssAnon: ]] && ((v > peak)) && peak=$v
		done <"/proc/$pid/status" 2>/dev/null || true
	done
	wait "$pid" || true
	echo $((peak / 1024))
}
