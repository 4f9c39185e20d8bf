#!/usr/bin/env bash
# bench/small-sets.sh: memory of many small sorted sets, the shape of a
# rate limiter's or a queue's keyspace: KEYS keys (rl:user:<n>), each of
# MEMBERS members scored with millisecond timestamps, loaded with
# redis-cli --pipe into a fresh goblind (--fsync everysec) and a fresh
# redis-server without persistence. Printed per engine: MEMORY USAGE of one
# key, INFO's used_memory and used_memory_dataset (Goblin's dataset is
# every key's exact allocation), and the server's resident memory before
# and after the load.
#
# Knobs: KEYS=100000 MEMBERS=10
#   GOBLIND=<a goblind binary to measure instead of building this tree's>
set -euo pipefail
cd "$(dirname "$0")/.."

KEYS=${KEYS:-100000}
MEMBERS=${MEMBERS:-10}
# shellcheck source=bench/lib.sh
. bench/lib.sh
need_tools "redis-server redis-tools python3" redis-server redis-cli python3
workdir small
goblind_binary "$WORK/bin"

fill() {
	python3 -c "
import sys
out = sys.stdout.buffer
for k in range($KEYS):
    args = [b'ZADD', b'rl:user:%d' % k]
    for i in range($MEMBERS):
        t = 1700000000000 + i * 100
        args += [b'%d' % t, b'%d-%d' % (t, k)]
    out.write(b'*%d\r\n' % len(args) + b''.join(b'\$%d\r\n%s\r\n' % (len(a), a) for a in args))
" | redis-cli -p "$1" --pipe >/dev/null
}

rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$1/status"; }

field() { redis-cli -p "$1" INFO memory | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }

for engine in goblind redis-server; do
	port=$(freeport)
	mkdir -p "$WORK/$engine"
	if [ "$engine" = goblind ]; then
		"$GOBLIND" --addr "127.0.0.1:$port" --data "$WORK/$engine" --fsync everysec --log-level warn \
			2>"$WORK/goblind.log" &
	else
		redis-server --port "$port" --bind 127.0.0.1 --dir "$WORK/$engine" --save '' --appendonly no \
			--logfile "$WORK/$engine/redis.log" &
	fi
	PID=$!
	waitping "$port"
	before=$(rss "$PID")
	fill "$port"
	keys=$(redis-cli -p "$port" DBSIZE)
	echo "$engine: $keys keys of $MEMBERS members; MEMORY USAGE rl:user:1 $(redis-cli -p "$port" MEMORY USAGE rl:user:1)," \
		"used_memory $(field "$port" used_memory), used_memory_dataset $(field "$port" used_memory_dataset)," \
		"resident $before -> $(rss "$PID") bytes"
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
done
