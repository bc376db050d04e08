#!/usr/bin/env bash
# serveclients.sh: issue 40's serving benchmark (BENCHMARKS.md, "serve: a Parquet column to many
# clients at once, within a memory budget") — `ndarrow serve` of one ZSTD Parquet file, the
# float32 [65536, 1024] column emb (256 MiB) beside an int64 label, fetched whole (x.emb) by N
# `ndarrow get --to arrow grpc://127.0.0.1:PORT x.emb /dev/null` started at once, for each
# number of clients and memory budget; every get must exit 0.
#
#   bench/serveclients.sh [DIR]
#
# Needs go. DIR (default: a new temporary directory, kept) receives mk/ (bench/maketable -rows
# 65536 -width 1024) and served/x.parquet: with ARROW_CPP, Arrow C++ 17's (`parquet_bench write
# mk/table.arrow x.parquet zstd 32768`: two ZSTD row groups of 128 MiB), else ndarrow's
# (`ndarrow convert --parquet-compression zstd`); reused when there, REGEN=1 writes them again.
# Environment:
#   NDARROW    an ndarrow binary (default: built from this checkout into DIR/bin)
#   ARROW_CPP  the bin directory of ../shared/reference/arrow-cpp-17 (optional)
#   CLIENTS    numbers of clients (default "8 32")
#   BUDGETS    --memory-budget values (default "512MiB 1GiB 1536MiB 2GiB"; "default": none given)
#   PORT       the server's port on 127.0.0.1 (default 9420)
#
# For each run the server is started (`serve --addr 127.0.0.1:PORT [--memory-budget B] DIR`,
# GODEBUG=gctrace=1), the gets run in the background and are waited for, then the server's
# /proc/PID/status is read (VmHWM: its peak resident memory, the file's mapped pages included)
# and it is stopped by SIGTERM. Its RssAnon and RssFile are sampled every 20 ms meanwhile (each
# column its own peak) and the largest heap a collection started at is read from gctrace.
# wall is from the first get's start to the last one's end; aggregate is N × 256 MiB over it.
# Results: DIR/results.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d /tmp/ndarrow-serveclients.XXXXXX)}
mkdir -p "$dir/bin" "$dir/out" "$dir/served"
dir=$(cd "$dir" && pwd)
clients=${CLIENTS:-8 32}
budgets=${BUDGETS:-512MiB 1GiB 1536MiB 2GiB}
port=${PORT:-9420}
results=$dir/results.md
column=$((65536 * 1024 * 4))

say() { printf '%s\n' "$*" >&2; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== data in $dir (load average $load0)"
if [[ -n ${NDARROW:-} ]]; then
	nd=$NDARROW
else
	nd=$dir/bin/ndarrow
	(cd "$root" && go build -o "$nd" ./cmd/ndarrow)
fi
if [[ ${REGEN:-} == 1 || ! -f $dir/served/x.parquet ]]; then
	(cd "$root" && go run ./bench/maketable -dir "$dir/mk" -rows 65536 -width 1024 -takes 1) >&2
	if [[ -n ${ARROW_CPP:-} ]]; then
		"$ARROW_CPP/parquet_bench" write "$dir/mk/table.arrow" "$dir/served/x.parquet" zstd 32768 >&2
		writer="Arrow C++ 17"
	else
		"$nd" convert --parquet-compression zstd "$dir/mk/table.arrow" "$dir/served/x.parquet"
		writer=ndarrow
	fi
	echo "$writer" >"$dir/served.writer"
fi
ls -l "$dir/served/x.parquet" >&2

# status PID FIELD: FIELD of /proc/PID/status, in KiB (0 when gone).
status() { awk -v f="$2:" '$1 == f {print $2; found=1} END {if (!found) print 0}' "/proc/$1/status" 2>/dev/null || echo 0; }

# one N BUDGET: a server, N gets at once; prints a row of the results table.
one() {
	local n=$1 budget=$2 flags=()
	[[ $budget == default ]] || flags=(--memory-budget "$budget")
	GODEBUG=gctrace=1 "$nd" serve --addr "127.0.0.1:$port" "${flags[@]}" "$dir/served" >"$dir/out/serve.out" 2>"$dir/out/serve.err" &
	local pid=$! i
	for ((i = 0; i < 300; i++)); do
		grep -q '^serving' "$dir/out/serve.out" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || { say "serve ended: $(cat "$dir/out/serve.err")"; exit 1; }
		sleep 0.1
	done
	local anon=0 file=0 a f
	(
		while kill -0 "$pid" 2>/dev/null; do
			echo "$(status "$pid" RssAnon) $(status "$pid" RssFile)"
			sleep 0.02
		done
	) >"$dir/out/samples" &
	local sampler=$!
	local t0 t1 gets=() failed=0
	t0=$(date +%s%N)
	for ((i = 0; i < n; i++)); do
		"$nd" get --to arrow "grpc://127.0.0.1:$port" x.emb /dev/null >/dev/null 2>"$dir/out/get$i.err" &
		gets+=($!)
	done
	for g in "${gets[@]}"; do
		wait "$g" || failed=$((failed + 1))
	done
	t1=$(date +%s%N)
	local hwm
	hwm=$(status "$pid" VmHWM)
	kill -TERM "$pid"
	wait "$pid" || true
	wait "$sampler" || true
	while read -r a f; do
		((a > anon)) && anon=$a
		((f > file)) && file=$f
	done <"$dir/out/samples"
	local heap
	heap=$(grep -oE '[0-9]+->[0-9]+->[0-9]+ MB' "$dir/out/serve.err" | awk -F'->' '$1 > m {m = $1} END {print m + 0}')
	local wall
	wall=$(awk -v n=$((t1 - t0)) 'BEGIN{printf "%.2f", n/1e9}')
	local ok="every get exit 0"
	((failed == 0)) || { ok="$failed gets failed: $(cat "$dir"/out/get*.err | sort | uniq -c | head -3)"; }
	say "$n clients, budget $budget: $wall s, VmHWM $((hwm / 1024)) MiB; $ok"
	printf '| %d | %s | %s s | %s GiB/s | %d MiB | %d / %d MiB | %s MB | %s |\n' "$n" "$budget" "$wall" \
		"$(awk -v n="$n" -v c=$column -v w="$wall" 'BEGIN{printf "%.2f", n*c/w/2^30}')" \
		$((hwm / 1024)) $((anon / 1024)) $((file / 1024)) "$heap" "$ok"
}

{
	echo "ndarrow serve of $(cat "$dir/served.writer" 2>/dev/null || echo "?")'s x.parquet ($(stat -c %s "$dir/served/x.parquet") bytes), $(nproc) cores, $(uname -sr), $(awk '/MemTotal/ {printf "%.0f GiB", $2/2^20}' /proc/meminfo);" \
		"load average $load0 at the start"
	echo
	echo "| clients | \`--memory-budget\` | wall | aggregate | peak RSS (VmHWM) | anonymous / file peak | Go heap max | |"
	echo "|---|---|---|---|---|---|---|---|"
	for budget in $budgets; do
		for n in $clients; do
			one "$n" "$budget"
		done
	done
	echo
	echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
} >"$results"
cat "$results"
