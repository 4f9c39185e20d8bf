#!/usr/bin/env bash
# bench/syscalls.sh: the system calls and CPU a server spends per command
# under redis-benchmark (50 clients, one command in flight each), goblind
# against redis-server with the same promise. On a virtual machine a
# system call can cost a microsecond or more (perf bench syscall basic),
# so their number per command weighs as much as the code around them.
#
# For each engine and workload: requests a second, the server's user and
# system CPU per request (/proc/<pid>/stat), and the system calls per
# request it made, counted by the kernel's tracepoints (perf stat -e
# 'syscalls:sys_enter_*' -p <pid>), the main ones by name. Engines
# alternate, the order reversing every repetition.
#
#   $OUT/results.csv  rep,engine,workload,rps,user_us,sys_us,<syscall>...
#   printed           the median of each column per engine and workload
#
# Engines: goblin-always (goblind --fsync always) against redis-always
# (appendfsync always) for ZADD; both also answer PING, the floor of a
# command that neither logs nor changes anything.
# Knobs: REPS=3 N=100000 CLIENTS=50 WORKLOADS="zadd ping"
#   OUT=bench/results/syscalls-<UTC time> GOBLIND=<a goblind binary>
# Needs root (or perf_event_paranoid <= 1) for the tracepoints.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
N=${N:-100000}
CLIENTS=${CLIENTS:-50}
WORKLOADS=${WORKLOADS:-"zadd ping"}
OUT=${OUT:-bench/results/syscalls-$(date -u +%Y%m%dT%H%M%SZ)}
CALLS="read write epoll_pwait epoll_wait futex nanosleep sched_yield pwrite64 fdatasync"

# shellcheck source=bench/lib.sh
. bench/lib.sh
need_tools "redis-server redis-tools linux-perf python3" redis-server redis-cli redis-benchmark perf python3
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
workdir sc

goblind_binary "$OUT/bin"
{
	machine_info
	echo "goblind: $GOBLIND"
	echo "settings: REPS=$REPS N=$N CLIENTS=$CLIENTS WORKLOADS=$WORKLOADS"
	echo "a system call: $(perf bench syscall basic 2>/dev/null | awk '/usecs\/op/ {print $1 " µs (perf bench syscall basic)"}')"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

events=""
for c in $CALLS; do events="$events${events:+,}syscalls:sys_enter_$c"; done
events="$events,raw_syscalls:sys_enter"

# run ENGINE REP: every workload against a fresh server.
run() {
	local engine=$1 rep=$2 dir="$WORK/$1" port w u0 s0 u1 s1 rps
	rm -rf "$dir"
	mkdir -p "$dir"
	port=$(freeport)
	case $engine in
	redis-always)
		redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly yes \
			--appendfsync always --logfile "$dir/redis.log" &
		;;
	goblin-always)
		"$GOBLIND" --addr "127.0.0.1:$port" --data "$dir" --log-level warn 2>"$dir/goblind.log" &
		;;
	esac
	PID=$!
	waitping "$port"
	# A first write waits for a single node's election; not measured.
	redis-cli -p "$port" ZADD bench:k 0 m >/dev/null
	for w in $WORKLOADS; do
		local cmd=(ZADD bench:k __rand_int__ m__rand_int__)
		[ "$w" = ping ] && cmd=(PING)
		perf stat -x, -e "$events" -p "$PID" -o "$WORK/perf.txt" &
		PERF=$!
		PIDS=("$PERF")
		sleep 0.3
		read -r u0 s0 < <(cut -d' ' -f14,15 "/proc/$PID/stat")
		rps=$(timeout 300 redis-benchmark -p "$port" -c "$CLIENTS" -P 1 -n "$N" -r 100000 -q "${cmd[@]}" |
			tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
		read -r u1 s1 < <(cut -d' ' -f14,15 "/proc/$PID/stat")
		kill -INT "$PERF"
		wait "$PERF" || true
		PIDS=()
		python3 - "$WORK/perf.txt" "$rep" "$engine" "$w" "$rps" "$u0" "$s0" "$u1" "$s1" "$N" "$CALLS" <<'PY' | tee -a "$OUT/results.csv"
import os, sys
path, rep, engine, w, rps, u0, s0, u1, s1, n, calls = sys.argv[1:]
n, tick = int(n), os.sysconf("SC_CLK_TCK")
counts = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[2] == "raw_syscalls:sys_enter":
        counts["raw_syscalls"] = float(f[0] or 0)
    elif len(f) > 2 and f[2].startswith("syscalls:sys_enter_"):
        counts[f[2].removeprefix("syscalls:sys_enter_")] = float(f[0] or 0)
row = [rep, engine, w, rps, f"{(int(u1) - int(u0)) / tick * 1e6 / n:.1f}", f"{(int(s1) - int(s0)) / tick * 1e6 / n:.1f}"]
row += [f"{counts.get(c, 0) / n:.3f}" for c in calls.split() + ["raw_syscalls"]]
print(",".join(row))
PY
	done
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
}

echo "rep,engine,workload,rps,user_us,sys_us,$(echo "$CALLS" | tr ' ' ','),all" >"$OUT/results.csv"
for rep in $(seq "$REPS"); do
	if [ $((rep % 2)) -eq 1 ]; then order="redis-always goblin-always"; else order="goblin-always redis-always"; fi
	for engine in $order; do run "$engine" "$rep"; done
done

python3 - "$OUT/results.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = [c for c in rows[0] if c not in ("rep", "engine", "workload")]
print("\nmedians per request (system calls: calls per request)\n")
print("| engine | workload | " + " | ".join(cols) + " |")
print("|---|---|" + "---|" * len(cols))
for key in sorted({(r["engine"], r["workload"]) for r in rows}, key=lambda k: (k[1], k[0])):
    rs = [r for r in rows if (r["engine"], r["workload"]) == key]
    med = [statistics.median(float(r[c]) for r in rs) for c in cols]
    print(f"| {key[0]} | {key[1]} | " + " | ".join(f"{v:,.0f}" if c == "rps" else f"{v:g}" for c, v in zip(cols, med)) + " |")
PY
echo "results in $OUT"
