#!/usr/bin/env bash
# Runs Redis's own test suites for sorted sets (tests/unit/type/zset.tcl)
# and ACL users (tests/unit/acl.tcl) against goblind in Redis's
# external-server mode, each on a fresh goblind, and reports how many
# tests passed, failed and were skipped. The sorted-set suite then runs
# once more through a follower of a fresh 3-node cluster, which forwards
# every write to the leader and reads its own state (CLUSTER=0 leaves that
# run out).
#
#   e2e/redis-suite.sh                 # Debian's redis source package
#   REDIS_SRC=/path/to/redis e2e/redis-suite.sh
#   REDIS_MIRROR=/path/to/redis.git REDIS_REF=7.2.5 e2e/redis-suite.sh
#
# The suite comes from, in order: $REDIS_SRC (an unpacked Redis source
# tree), $REDIS_MIRROR (a git repository of Redis: $REDIS_REF is exported),
# or Debian's source package of the installed redis-server (apt-get source
# with a private deb-src list: nothing of the system's apt configuration
# changes). Nothing is kept: the suite is unpacked in a temporary
# directory, removed at exit.
#
# Needs tclsh (apt-get install tcl) and go. A Redis 7.0 suite asserts Redis
# 7.0's double format, so goblind then runs with --double-format 7.0.
#
# Skipped: tests that use other data types, Pub/Sub or scripting
# (e2e/redis-suite.skip and e2e/redis-suite-acl.skip, with the reasons),
# tests tagged needs:debug or needs:repl (DEBUG RELOAD, DEBUG SLEEP,
# replication streams), and encoding assertions (--ignore-encoding: Goblin
# reports its own encodings, not listpack/skiplist). acl.tcl tags its
# first server block external:skip, as it changes users; the script drops
# that tag so the block runs, and the file's other blocks, which need
# server configuration (aclfile, acl-pubsub-default, user directives),
# are left out by theirs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
work=$(mktemp -d)
goblind_pids=()
stop_goblind() {
	local pid
	for pid in "${goblind_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${goblind_pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	goblind_pids=()
}
cleanup() {
	stop_goblind
	rm -rf "$work"
}
trap cleanup EXIT

command -v tclsh >/dev/null || { echo "redis-suite: tclsh not found (apt-get install -y tcl)" >&2; exit 2; }

# 1. The suite.
src="$work/redis"
if [ -n "${REDIS_SRC:-}" ]; then
	cp -r "$REDIS_SRC" "$src"
elif [ -n "${REDIS_MIRROR:-}" ]; then
	mkdir -p "$src"
	git -C "$REDIS_MIRROR" archive "${REDIS_REF:-7.2.5}" runtest tests | tar -x -C "$src"
else
	lists="$work/apt-lists"
	mkdir -p "$lists/partial" "$work/deb" "$work/cache/archives/partial"
	. /etc/os-release
	echo "deb-src http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" >"$work/sources.list"
	apt=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$lists" -o Dir::Cache="$work/cache")
	apt-get update -qq "${apt[@]}"
	(cd "$work/deb" && apt-get source -qq --download-only "${apt[@]}" redis >/dev/null 2>&1)
	tar -xzf "$work"/deb/redis_*.orig.tar.gz -C "$work"
	mv "$work"/redis-[0-9]* "$src"
fi
version=$(sed -n 's/^#define REDIS_VERSION "\(.*\)"/\1/p' "$src/src/version.h" 2>/dev/null || true)
[ -n "$version" ] || version=${REDIS_REF:-unknown}
# In external mode the harness flushes Redis functions before each file;
# Goblin has none (FUNCTION is an unknown command).
sed -i 's/^    r function flush$/    catch {r function flush}/' "$src/tests/support/server.tcl"

# acl.tcl's first block runs against the external server (see above).
sed -i '1s/^start_server {tags {"acl external:skip"}} {$/start_server {tags {"acl"}} {/' "$src/tests/unit/acl.tcl"

double=7.2
case "$version" in 7.0.*|6.*) double=7.0 ;; esac
(cd "$root" && go build -o "$work/goblind" ./cmd/goblind)
# start_goblin_cluster and freeport (each port handed out once, under $WORK).
WORK=$work
. "$root/bench/lib.sh"
strip() { sed 's/\x1b\[[0-9;]*m//g'; }

# start_goblind starts goblind on a free port with a new data directory
# and sets port.
start_goblind() {
	local name=$1
	"$work/goblind" --addr 127.0.0.1:0 --data "$work/data-$name" --fsync everysec --double-format "$double" \
		--log-level info >"$work/goblind-$name.log" 2>&1 &
	goblind_pids+=($!)
	local addr=
	for _ in $(seq 1 200); do
		addr=$(grep -o 'ready to accept connections: addr=[^ ]*' "$work/goblind-$name.log" | sed 's/.*addr=//' || true)
		[ -n "$addr" ] && break
		kill -0 "${goblind_pids[-1]}" 2>/dev/null || { cat "$work/goblind-$name.log" >&2; exit 1; }
		sleep 0.05
	done
	[ -n "$addr" ] || { echo "redis-suite: goblind did not start" >&2; cat "$work/goblind-$name.log" >&2; exit 1; }
	port=${addr##*:}
	where="goblind 127.0.0.1:$port"
}

# start_cluster starts three goblind as a cluster, on free ports, and sets
# port to a follower's once a leader is elected and the follower knows it.
start_cluster() {
	local name=$1 p role
	start_goblin_cluster "$work/goblind" "$work/cluster-$name" --fsync everysec --double-format "$double" --log-level info
	goblind_pids+=("${CLUSTER_PIDS[@]}")
	port=
	for _ in $(seq 1 300); do
		for p in "${CLUSTER_PORTS[@]}"; do
			role=$(redis-cli -p "$p" ROLE 2>/dev/null | head -2 | tr '\n' ' ' || true)
			# A follower answers "slave <leader's host> ..." once it knows the leader.
			case $role in "slave 127.0.0.1 "*) port=$p ;; esac
		done
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "redis-suite: the 3-node cluster elected no leader" >&2; tail -n 20 "$work/cluster-$name"/n*.log >&2; exit 1; }
	where="a follower (127.0.0.1:$port) of a 3-node goblind cluster"
}

# run_unit runs one test file against a fresh goblind, or a fresh cluster's
# follower: run_unit <unit> <skip file> <what the skips are> [cluster].
failed=0
run_unit() {
	local unit=$1 skipfile=$2 why=$3 mode=${4:-} name where
	name=$(basename "$unit")${mode:+-$mode}
	if [ "$mode" = cluster ]; then
		start_cluster "$name"
	else
		start_goblind "$name"
	fi
	grep -v '^\s*\(#\|$\)' "$skipfile" >"$work/skip-$name.txt"
	echo "redis-suite: Redis $version tests/$unit.tcl against $where (--double-format $double)"
	set +e
	(cd "$src" && ./runtest --host 127.0.0.1 --port "$port" --single "$unit" \
		--ignore-encoding --ignore-digest --tags -needs:debug --tags -needs:repl \
		--skipfile "$work/skip-$name.txt" --timeout 300 --clients 1) >"$work/run-$name.log" 2>&1
	local status=$?
	set -e
	stop_goblind
	strip <"$work/run-$name.log" | grep -E '^\[(err|exception|TIMEOUT)\]|^\[(ignore|skip)\]' || true
	local ok err skip ignore
	ok=$(strip <"$work/run-$name.log" | grep -c '^\[ok\]' || true)
	err=$(strip <"$work/run-$name.log" | grep -cE '^\[(err|exception|TIMEOUT)\]' || true)
	skip=$(strip <"$work/run-$name.log" | grep -c '^\[skip\]' || true)
	ignore=$(strip <"$work/run-$name.log" | grep -c '^\[ignore\]' || true)
	echo "redis-suite: Redis $version $(basename "$unit").tcl${mode:+ through a follower of a 3-node cluster}: $ok passed, $err failed, $skip skipped ($why), $ignore left out by tag"
	if [ "$status" -ne 0 ] || [ "$err" -ne 0 ] || [ "$ok" -eq 0 ]; then
		strip <"$work/run-$name.log" | tail -40 >&2
		failed=1
	fi
}

run_unit unit/type/zset "$here/redis-suite.skip" "other data types"
run_unit unit/acl "$here/redis-suite-acl.skip" "other data types, Pub/Sub, scripting, subcommands Goblin lacks"
if [ "${CLUSTER:-1}" != 0 ]; then
	run_unit unit/type/zset "$here/redis-suite.skip" "other data types" cluster
fi
exit "$failed"
