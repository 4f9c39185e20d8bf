#!/usr/bin/env bash
# bench/compare.sh: Goblin against redis-server on this machine, in one run.
#
# Starts each engine fresh on free loopback ports, runs the same workloads
# against it with bench/goblin-bench, stops it, and moves on; engines
# alternate run by run (the order reverses every repetition) so slow
# drifts of a shared machine hit them alike. Then it reports medians,
# Goblin/Redis ratios and a chart:
#
#   $OUT/results.jsonl  every measurement, one JSON line each
#   $OUT/table.md       the tables (medians, ratios, targets)
#   $OUT/chart.png      throughput relative to redis, bytes per member
#   $OUT/machine.txt    the machine, versions and load
#
# Engines: redis (no persistence), redis-aof-everysec, redis-aof-always,
# goblin-everysec, goblin-always (single node, node/wal log), goblin-3node
# (three goblind on loopback, --fsync everysec, measured at the leader).
#
# Every knob is an environment variable; the defaults are the published run:
#   REPS=3 N=2000000 RPC_TIMEOUT=60s REPLAY_TIMEOUT=300s PIPE_DEPTH=64 CLIENTS=50 PIPELINE=16
#   LOAD_MEMBERS=100000 LOAD_REQUESTS=3000000 LOAD_DURATION=10s
#   ENGINES="redis redis-aof-everysec redis-aof-always goblin-everysec goblin-always goblin-3node"
#   WORKLOADS=zadd,zincrby,zscore,zrank,zrevrank,zrange,zrangebyscore,mixed
#   OUT=bench/results/<UTC time>   GOBLIND_ARGS= (extra goblind flags)
# A quick smoke run: REPS=1 N=20000 LOAD_DURATION=2s bench/compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
N=${N:-2000000}
REPLAY_TIMEOUT=${REPLAY_TIMEOUT:-300s}
RPC_TIMEOUT=${RPC_TIMEOUT:-60s}
PIPE_DEPTH=${PIPE_DEPTH:-64}
CLIENTS=${CLIENTS:-50}
PIPELINE=${PIPELINE:-16}
LOAD_MEMBERS=${LOAD_MEMBERS:-100000}
LOAD_REQUESTS=${LOAD_REQUESTS:-3000000}
LOAD_DURATION=${LOAD_DURATION:-10s}
ENGINES=${ENGINES:-"redis redis-aof-everysec redis-aof-always goblin-everysec goblin-always goblin-3node"}
WORKLOADS=${WORKLOADS:-zadd,zincrby,zscore,zrank,zrevrank,zrange,zrangebyscore,mixed}
OUT=${OUT:-bench/results/$(date -u +%Y%m%dT%H%M%SZ)}
GOBLIND_ARGS=${GOBLIND_ARGS:-}
PACKED=(--packed 'wiki:*=int32:float32' --packed 'bench:*=int32:float32')

mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
# shellcheck source=bench/lib.sh
. bench/lib.sh
workdir compare

echo "== building into $OUT/bin"
go build -o "$OUT/bin/goblind" ./cmd/goblind
(cd bench && go build -o "$OUT/bin/goblin-bench" ./goblin-bench)
BENCH="$OUT/bin/goblin-bench"
GOBLIND="$OUT/bin/goblind"

{
	machine_info
	echo "settings: REPS=$REPS N=$N RPC_TIMEOUT=$RPC_TIMEOUT REPLAY_TIMEOUT=$REPLAY_TIMEOUT PIPE_DEPTH=$PIPE_DEPTH CLIENTS=$CLIENTS PIPELINE=$PIPELINE LOAD_MEMBERS=$LOAD_MEMBERS LOAD_REQUESTS=$LOAD_REQUESTS LOAD_DURATION=$LOAD_DURATION"
	echo "engines: $ENGINES"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt"

# start ENGINE: starts it, sets PORT (the address to measure) and SPIDS.
start() {
	local engine=$1 dir="$WORK/$1"
	rm -rf "$dir"
	mkdir -p "$dir"
	SPIDS=()
	PORT=$(freeport)
	case $engine in
	redis | redis-aof-everysec | redis-aof-always)
		local aof=(--appendonly no)
		[ "$engine" = redis-aof-everysec ] && aof=(--appendonly yes --appendfsync everysec)
		[ "$engine" = redis-aof-always ] && aof=(--appendonly yes --appendfsync always)
		redis-server --port "$PORT" --bind 127.0.0.1 --dir "$dir" --save '' "${aof[@]}" \
			--logfile "$dir/redis.log" &
		SPIDS+=($!)
		;;
	goblin-everysec | goblin-always)
		# shellcheck disable=SC2086
		"$GOBLIND" --addr "127.0.0.1:$PORT" --raft-addr "127.0.0.1:$(freeport)" --data "$dir" \
			--fsync "${engine#goblin-}" "${PACKED[@]}" --log-level warn $GOBLIND_ARGS 2>"$dir/goblind.log" &
		SPIDS+=($!)
		;;
	goblin-3node)
		# shellcheck disable=SC2086
		start_goblin_cluster "$GOBLIND" "$dir" --leave-on-shutdown=false --fsync everysec "${PACKED[@]}" \
			--log-level warn $GOBLIND_ARGS
		SPIDS+=("${CLUSTER_PIDS[@]}")
		PORT=$(goblin_leader) || return 1
		;;
	*)
		echo "unknown engine $engine" >&2
		return 1
		;;
	esac
	waitping "$PORT"
	# A write must succeed before measuring (a new leader applies its barrier first).
	for _ in $(seq 100); do
		redis-cli -p "$PORT" ZADD bench:ready 1 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
}

# measure ENGINE REP: the reply-per-command replay (bounded by
# RPC_TIMEOUT: under fsync-per-command a full replay takes an hour; its
# prefix is checked all the same), the pipelined replay, memory after it
# (the full replay, the same final state on every engine), the loads.
measure() {
	local engine=$1 rep=$2
	local common=(--addr "127.0.0.1:$PORT" --engine "$engine" --rep "$rep" --out "$OUT/results.jsonl")
	"$BENCH" replay "${common[@]}" --key wiki:rpc --n "$N" --timeout "$RPC_TIMEOUT" --workload replay-rpc
	redis-cli -p "$PORT" DEL wiki:rpc >/dev/null
	"$BENCH" replay "${common[@]}" --key wiki:pages --n "$N" --timeout "$REPLAY_TIMEOUT" --pipeline "$PIPE_DEPTH" --workload replay-pipelined
	"$BENCH" memory "${common[@]}" --key wiki:pages --workload replay-pipelined
	"$BENCH" load "${common[@]}" --workload "$WORKLOADS" --members "$LOAD_MEMBERS" \
		--clients "$CLIENTS" --pipeline "$PIPELINE" --requests "$LOAD_REQUESTS" --duration "$LOAD_DURATION"
}

read -r -a engines <<<"$ENGINES"
for rep in $(seq "$REPS"); do
	order=("${engines[@]}")
	if [ $((rep % 2)) -eq 0 ]; then
		order=()
		for ((i = ${#engines[@]} - 1; i >= 0; i--)); do order+=("${engines[$i]}"); done
	fi
	for engine in "${order[@]}"; do
		echo "== repetition $rep/$REPS: $engine (load $(cut -d' ' -f1 /proc/loadavg))"
		start "$engine"
		if ! measure "$engine" "$rep"; then
			echo "!! $engine repetition $rep failed" | tee -a "$OUT/failures.txt"
		fi
		stop_engine
	done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

"$BENCH" report --md "$OUT/table.md" --png "$OUT/chart.png" "$OUT/results.jsonl"
cat "$OUT/table.md"
echo "results in $OUT"
