#!/usr/bin/env bash
# bench/one-client.sh: one client with one command in flight, client and
# server sharing one CPU: redis-cli replays ZINCRBY commands from a file,
# each waiting for its reply, against goblind --fsync everysec and
# redis-server without persistence, both pinned with the client to CPU 0
# (taskset). Every goroutine hand-off and system call per command shows
# here, and nothing runs in parallel to hide it.
#
#   $OUT/results.csv  rep,engine,ops_per_sec,server_cpu_us
#   printed           median and worst rep per engine, and Goblin's ratio
#
# Knobs: REPS=5 N=200000 MEMBERS=50000 OUT=bench/results/one-client-<UTC time>
#   GOBLIND=<a goblind binary to measure instead of building this tree's>
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
N=${N:-200000}
MEMBERS=${MEMBERS:-50000}
OUT=${OUT:-bench/results/one-client-$(date -u +%Y%m%dT%H%M%SZ)}
# shellcheck source=bench/lib.sh
. bench/lib.sh
need_tools "redis-server redis-tools util-linux python3" redis-server redis-cli taskset python3
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
workdir oc

goblind_binary "$OUT/bin"
{
	machine_info
	echo "goblind: $GOBLIND"
	echo "settings: REPS=$REPS N=$N MEMBERS=$MEMBERS"
} >"$OUT/machine.txt"

python3 -c "
import random
r = random.Random(1)
with open('$WORK/cmds.txt', 'w') as f:
    for _ in range($N):
        f.write('ZINCRBY bench:wiki 1 p%d\n' % r.randint(1, $MEMBERS))
"

# run ENGINE REP: one replay against a fresh server.
run() {
	local engine=$1 rep=$2 dir="$WORK/$1" port t0 t1 s e
	rm -rf "$dir"
	mkdir -p "$dir"
	port=$(freeport)
	case $engine in
	redis)
		taskset -c 0 redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
			--logfile "$dir/redis.log" &
		;;
	goblin-everysec)
		taskset -c 0 "$GOBLIND" --addr "127.0.0.1:$port" --data "$dir" --fsync everysec --log-level warn \
			2>"$dir/goblind.log" &
		;;
	esac
	PID=$!
	waitping "$port"
	t0=$(cut -d' ' -f14,15 "/proc/$PID/stat")
	s=$(date +%s.%N)
	taskset -c 0 redis-cli -p "$port" <"$WORK/cmds.txt" >/dev/null
	e=$(date +%s.%N)
	t1=$(cut -d' ' -f14,15 "/proc/$PID/stat")
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
	python3 -c "
import os
t0 = sum(map(int, '$t0'.split())); t1 = sum(map(int, '$t1'.split()))
print(f'$rep,$engine,{$N / ($e - $s):.0f},{(t1 - t0) / os.sysconf(\"SC_CLK_TCK\") * 1e6 / $N:.1f}')
" | tee -a "$OUT/results.csv"
}

echo "rep,engine,ops_per_sec,server_cpu_us" >"$OUT/results.csv"
for rep in $(seq "$REPS"); do
	if [ $((rep % 2)) -eq 1 ]; then order="redis goblin-everysec"; else order="goblin-everysec redis"; fi
	for engine in $order; do run "$engine" "$rep"; done
done

python3 - "$OUT/results.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["engine"], []).append((float(r["ops_per_sec"]), float(r["server_cpu_us"])))
print("| engine | median ops/s | worst | server CPU µs/command (median) |")
print("|---|---|---|---|")
for e, v in sorted(by.items()):
    print(f"| {e} | {statistics.median(x for x, _ in v):,.0f} | {min(x for x, _ in v):,.0f} | {statistics.median(c for _, c in v):.1f} |")
g, r = by.get("goblin-everysec"), by.get("redis")
if g and r:
    print(f"\ngoblind --fsync everysec / redis without persistence: "
          f"{statistics.median(x for x, _ in g) / statistics.median(x for x, _ in r):.2f}× "
          f"(worst {min(x for x, _ in g) / min(x for x, _ in r):.2f}×; target ≥ 0.8×)")
PY
echo "results in $OUT"
