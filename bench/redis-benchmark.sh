#!/usr/bin/env bash
# bench/redis-benchmark.sh: Goblin against Redis as users measure them,
# with redis-benchmark itself: 50 clients, one command in flight per client
# (-P 1) and 16 (-P 16), random members, in one key and across many keys.
#
# Every engine starts fresh on free loopback ports for each repetition, runs
# every workload, and stops; the order of engines reverses every repetition
# so slow drifts of a shared machine hit them alike. Then a table of the
# median and the worst repetition of each engine, and Goblin's ratios to the
# Redis engine that makes the same promise:
#
#   $OUT/results.csv  rep,engine,via,workload,pipeline,rps,p50_ms,cpu_us,max_ms
#                     (cpu_us: CPU time of the engine's server processes, all
#                     of them, per request: user + system, from /proc)
#   $OUT/table.md     medians, worst reps, ratios
#   $OUT/machine.txt  the machine, versions, fdatasync latency and load
#
# Engines (ENGINES):
#   redis               redis-server without persistence
#   redis-always        redis-server, appendonly yes, appendfsync always
#   redis-repl          a primary and 2 replicas, all appendfsync always;
#                       writes via the primary, reads via the primary and a replica
#   goblin-always       single goblind, --fsync always (the default)
#   goblin-everysec     single goblind, --fsync everysec
#   goblin-3node        three goblind, --fsync always; writes and
#                       linearizable reads via the leader and via a follower
#
# Workloads (WORKLOADS), each a redis-benchmark command:
#   zadd       ZADD bench:k <random score> m<random>          (one key)
#   zadd-keys  ZADD bench:<random> <random score> m<random>   (many keys)
#   zincrby    ZINCRBY bench:k 1 m<random>
#   zscore     ZSCORE bench:k m<random>     (bench:k holds every member)
#   zrank      ZRANK bench:k m<random>
#   zscore-ro  ZSCORE on the replica or follower only, with READONLY on Goblin:
#              measured with goblin-bench load (redis-benchmark cannot send
#              READONLY first), on redis-repl and goblin-3node
#
# Knobs: REPS=5 CLIENTS=50 PIPELINES="1 16" MEMBERS=100000
#   N1=100000 (requests at -P 1) N16=400000 (at -P 16)
#   ENGINES="redis-always redis-repl goblin-always goblin-3node redis goblin-everysec"
#   WORKLOADS="zadd zadd-keys zincrby zscore zrank" OUT=bench/results/rb-<UTC time>
#   GOBLIND=<a goblind binary to measure instead of building this tree's>
# A quick smoke run: REPS=1 N1=5000 N16=20000 bench/redis-benchmark.sh
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
CLIENTS=${CLIENTS:-50}
PIPELINES=${PIPELINES:-"1 16"}
MEMBERS=${MEMBERS:-100000}
N1=${N1:-100000}
N16=${N16:-400000}
ENGINES=${ENGINES:-"redis-always redis-repl goblin-always goblin-3node redis goblin-everysec"}
WORKLOADS=${WORKLOADS:-"zadd zadd-keys zincrby zscore zrank"}
OUT=${OUT:-bench/results/rb-$(date -u +%Y%m%dT%H%M%SZ)}

# shellcheck source=bench/lib.sh
. bench/lib.sh
need_tools "redis-server redis-tools python3" redis-server redis-cli redis-benchmark python3

mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
workdir rb

goblind_binary "$OUT/bin"
case " $WORKLOADS " in
*" zscore-ro "*)
	echo "== building goblin-bench into $OUT/bin"
	(cd bench && go build -o "$OUT/bin/goblin-bench" ./goblin-bench)
	;;
esac

# fdatasync latency of the disk the data lives on: 2,000 4 KiB O_DSYNC writes.
dsync_latency() {
	local f="$WORK/dsync" t
	t=$(dd if=/dev/zero of="$f" bs=4k count=2000 oflag=dsync 2>&1 | awk '/copied/ {print $(NF-3)}')
	rm -f "$f"
	python3 -c "print(f'{float(\"$t\") / 2000 * 1e3:.3f} ms per 4 KiB O_DSYNC write')"
}

{
	machine_info
	echo "goblind: $GOBLIND"
	echo "disk: $(dsync_latency)"
	echo "settings: REPS=$REPS CLIENTS=$CLIENTS PIPELINES=$PIPELINES MEMBERS=$MEMBERS N1=$N1 N16=$N16"
	echo "engines: $ENGINES"
	echo "workloads: $WORKLOADS"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

# start ENGINE: starts it fresh; sets PORT (writes and reads) and, for the
# replicated engines, SECOND (a replica or follower, for reads and, on
# Goblin, forwarded writes).
start() {
	local engine=$1 dir="$WORK/$1"
	rm -rf "$dir"
	mkdir -p "$dir"
	SPIDS=()
	PORT=$(freeport)
	SECOND=""
	case $engine in
	redis | redis-always)
		local aof=(--appendonly no)
		[ "$engine" = redis-always ] && aof=(--appendonly yes --appendfsync always)
		redis-server --port "$PORT" --bind 127.0.0.1 --dir "$dir" --save '' "${aof[@]}" \
			--logfile "$dir/redis.log" &
		SPIDS+=($!)
		;;
	redis-repl)
		local p
		for i in 0 1 2; do
			mkdir -p "$dir/r$i"
			p=$PORT
			[ "$i" -gt 0 ] && p=$(freeport)
			local repl=()
			[ "$i" -gt 0 ] && repl=(--replicaof 127.0.0.1 "$PORT")
			[ "$i" -eq 1 ] && SECOND=$p
			redis-server --port "$p" --bind 127.0.0.1 --dir "$dir/r$i" --save '' --appendonly yes \
				--appendfsync always "${repl[@]}" --logfile "$dir/r$i/redis.log" &
			SPIDS+=($!)
		done
		waitping "$PORT"
		# Measured only once both replicas hold the primary's data and
		# take its stream (state=online): a replica merely connected may
		# still wait for its first sync (Redis's diskless sync waits
		# repl-diskless-sync-delay, 5 s, for more replicas), and until it
		# ends the primary feeds no replica at all.
		local online=0
		for _ in $(seq 300); do
			online=$(redis-cli -p "$PORT" INFO replication | grep -c '^slave[0-9]*:.*state=online' || true)
			[ "$online" = 2 ] && break
			sleep 0.1
		done
		if [ "$online" != 2 ]; then
			echo "redis-repl: $online of 2 replicas in sync after 30 s" >&2
			return 1
		fi
		;;
	goblin-always | goblin-everysec)
		"$GOBLIND" --addr "127.0.0.1:$PORT" --data "$dir" --fsync "${engine#goblin-}" \
			--log-level warn 2>"$dir/goblind.log" &
		SPIDS+=($!)
		;;
	goblin-3node)
		start_goblin_cluster "$GOBLIND" "$dir" --fsync always --log-level warn
		SPIDS+=("${CLUSTER_PIDS[@]}")
		PORT=$(goblin_leader) || return 1
		local p
		for p in "${CLUSTER_PORTS[@]}"; do [ "$p" != "$PORT" ] && SECOND=$p && break; done
		;;
	*)
		echo "unknown engine $engine" >&2
		return 1
		;;
	esac
	waitping "$PORT"
	for _ in $(seq 100); do
		redis-cli -p "$PORT" ZADD bench:ready 1 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
	# Every member of bench:k exists, for the reads; redis-benchmark's
	# __rand_int__ is 12 digits, zero-padded.
	python3 -c "
import sys
m = $MEMBERS
out = sys.stdout.buffer
for lo in range(0, m, 1000):
    args = [b'ZADD', b'bench:k']
    for i in range(lo, min(lo + 1000, m)):
        args += [str(i).encode(), b'm%012d' % i]
    out.write(b'*%d\r\n' % len(args) + b''.join(b'\$%d\r\n%s\r\n' % (len(a), a) for a in args))
" | redis-cli -p "$PORT" --pipe >/dev/null
	if [ -n "$SECOND" ]; then
		# The replica or follower has the members too before it is measured.
		for _ in $(seq 300); do
			[ "$(redis-cli -p "$SECOND" READONLY >/dev/null; redis-cli -p "$SECOND" ZCARD bench:k 2>/dev/null)" = "$MEMBERS" ] && break
			sleep 0.1
		done
	fi
}

command_of() {
	case $1 in
	zadd) echo "ZADD bench:k __rand_int__ m__rand_int__" ;;
	zadd-keys) echo "ZADD bench:__rand_int__ __rand_int__ m__rand_int__" ;;
	zincrby) echo "ZINCRBY bench:k 1 m__rand_int__" ;;
	zscore) echo "ZSCORE bench:k m__rand_int__" ;;
	zrank) echo "ZRANK bench:k m__rand_int__" ;;
	*) echo "unknown workload $1" >&2; return 1 ;;
	esac
}

# cpu_ticks: user + system CPU ticks of the running engine's servers.
cpu_ticks() {
	local t=0 pid f
	for pid in "${SPIDS[@]}"; do
		f=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null) || continue
		t=$((t + ${f% *} + ${f#* }))
	done
	echo "$t"
}

# cpu_per_request TICKS0 N: CPU µs per request since TICKS0.
cpu_per_request() {
	python3 -c "import os,sys; print(f'{($(cpu_ticks) - $1) / os.sysconf(\"SC_CLK_TCK\") * 1e6 / max($2, 1):.1f}')"
}

# run_redis_benchmark PORT P N WORKLOAD: "rps p50_ms max_ms" of one redis-benchmark
# run (nothing if it failed).
run_redis_benchmark() {
	local cmd line
	read -r -a cmd <<<"$(command_of "$4")"
	line=$(timeout 300 redis-benchmark -p "$1" -c "$CLIENTS" -P "$2" -n "$3" -r "$MEMBERS" --csv "${cmd[@]}" |
		tail -1) || return 0
	# "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
	# "p95_latency_ms","p99_latency_ms","max_latency_ms"
	echo "$line" | awk -F, '{gsub(/"/, ""); print $2, $5, $8}'
}

# run_readonly ENGINE PORT P N: "rps p50_ms max_ms" of ZSCORE on the replica or
# follower at PORT, with goblin-bench (READONLY first on Goblin), the key
# filled through the primary.
run_readonly() {
	local ro=()
	[ "$1" = goblin-3node ] && ro=(-readonly)
	rm -f "$WORK/ro.json"
	timeout 300 "$OUT/bin/goblin-bench" load -addr "127.0.0.1:$2" -primary "127.0.0.1:$PORT" "${ro[@]}" \
		-workload zscore -clients "$CLIENTS" -pipeline "$3" -requests "$4" -members "$MEMBERS" \
		-quiet -out "$WORK/ro.json" >/dev/null || return 0
	python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r.get('ops_per_sec',0), r.get('p50_us',0)/1000, r.get('max_us',0)/1000)" "$WORK/ro.json" 2>/dev/null || true
}

# bench ENGINE REP VIA PORT WORKLOAD: one run per pipeline depth, recorded
# with the servers' CPU time per request.
bench() {
	local engine=$1 rep=$2 via=$3 port=$4 workload=$5 n t0 rps p50 mx
	if [ "$workload" = zscore-ro ] && [ "$via" != second ]; then
		return 0
	fi
	for p in $PIPELINES; do
		n=$N16
		[ "$p" = 1 ] && n=$N1
		t0=$(cpu_ticks)
		if [ "$workload" = zscore-ro ]; then
			read -r rps p50 mx <<<"$(run_readonly "$engine" "$port" "$p" "$n")"
		else
			read -r rps p50 mx <<<"$(run_redis_benchmark "$port" "$p" "$n" "$workload")"
		fi
		if [ -z "$rps" ] || [ "$rps" = 0 ]; then
			rps=0 p50=0 mx=0
			echo "!! $engine $via $workload -P $p failed" | tee -a "$OUT/failures.txt"
		fi
		echo "$rep,$engine,$via,$workload,$p,$rps,$p50,$(cpu_per_request "$t0" "$n"),${mx:-0}" | tee -a "$OUT/results.csv"
	done
}

echo "rep,engine,via,workload,pipeline,rps,p50_ms,cpu_us,max_ms" >"$OUT/results.csv"
read -r -a engines <<<"$ENGINES"
for rep in $(seq "$REPS"); do
	order=("${engines[@]}")
	if [ $((rep % 2)) -eq 0 ]; then
		order=()
		for ((i = ${#engines[@]} - 1; i >= 0; i--)); do order+=("${engines[$i]}"); done
	fi
	for engine in "${order[@]}"; do
		echo "== repetition $rep/$REPS: $engine (load $(cut -d' ' -f1 /proc/loadavg))"
		if ! start "$engine"; then
			stop_engine
			echo "!! $engine did not start in repetition $rep" | tee -a "$OUT/failures.txt"
			for f in "$WORK/$engine"/*.log "$WORK/$engine"/*/*.log; do
				if [ -f "$f" ]; then echo "-- $f"; tail -n 5 "$f"; fi
			done | tee -a "$OUT/failures.txt"
			continue
		fi
		for w in $WORKLOADS; do
			bench "$engine" "$rep" primary "$PORT" "$w"
			if [ -n "$SECOND" ]; then
				case $engine:$w in
				redis-repl:zscore | redis-repl:zrank | redis-repl:zscore-ro | goblin-3node:*)
					bench "$engine" "$rep" second "$SECOND" "$w" ;;
				esac
			fi
		done
		stop_engine
	done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

python3 bench/rb-table.py "$OUT/results.csv" | tee "$OUT/table.md"
echo "results in $OUT"
