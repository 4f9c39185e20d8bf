#!/usr/bin/env bash
# Runs Redis's own sorted-set test suite, tests/unit/type/zset.tcl, against
# goblind in Redis's external-server mode, and reports how many tests
# passed, failed and were skipped.
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
# Skipped: tests that use other data types (e2e/redis-suite.skip, with the
# reasons), tests tagged needs:debug or needs:repl (DEBUG RELOAD, DEBUG
# SLEEP, replication streams), and encoding assertions (--ignore-encoding:
# Goblin reports its own encodings, not listpack/skiplist).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
work=$(mktemp -d)
goblind_pid=
cleanup() {
	if [ -n "$goblind_pid" ]; then
		kill "$goblind_pid" 2>/dev/null || true
		wait "$goblind_pid" 2>/dev/null || true
	fi
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

# 2. goblind on a free port.
double=7.2
case "$version" in 7.0.*|6.*) double=7.0 ;; esac
(cd "$root" && go build -o "$work/goblind" ./cmd/goblind)
"$work/goblind" --addr 127.0.0.1:0 --data "$work/data" --fsync everysec --double-format "$double" \
	--log-level info >"$work/goblind.log" 2>&1 &
goblind_pid=$!
addr=
for _ in $(seq 1 200); do
	addr=$(grep -o 'ready to accept connections: addr=[^ ]*' "$work/goblind.log" | sed 's/.*addr=//' || true)
	[ -n "$addr" ] && break
	kill -0 "$goblind_pid" 2>/dev/null || { cat "$work/goblind.log" >&2; exit 1; }
	sleep 0.05
done
[ -n "$addr" ] || { echo "redis-suite: goblind did not start" >&2; cat "$work/goblind.log" >&2; exit 1; }
port=${addr##*:}

# 3. The run.
grep -v '^\s*\(#\|$\)' "$here/redis-suite.skip" >"$work/skip.txt"
echo "redis-suite: Redis $version tests/unit/type/zset.tcl against goblind $addr (--double-format $double)"
set +e
(cd "$src" && ./runtest --host 127.0.0.1 --port "$port" --single unit/type/zset \
	--ignore-encoding --ignore-digest --tags -needs:debug --tags -needs:repl \
	--skipfile "$work/skip.txt" --timeout 300 --clients 1) >"$work/run.log" 2>&1
status=$?
set -e
strip() { sed 's/\x1b\[[0-9;]*m//g'; }
strip <"$work/run.log" | grep -E '^\[(err|exception|TIMEOUT)\]|^\[(ignore|skip)\]' || true
ok=$(strip <"$work/run.log" | grep -c '^\[ok\]' || true)
err=$(strip <"$work/run.log" | grep -cE '^\[(err|exception|TIMEOUT)\]' || true)
skip=$(strip <"$work/run.log" | grep -c '^\[skip\]' || true)
ignore=$(strip <"$work/run.log" | grep -c '^\[ignore\]' || true)
echo "redis-suite: Redis $version zset.tcl: $ok passed, $err failed, $skip skipped (other data types), $ignore left out by tag (needs:debug, needs:repl)"
if [ "$status" -ne 0 ] || [ "$err" -ne 0 ] || [ "$ok" -eq 0 ]; then
	strip <"$work/run.log" | tail -40 >&2
	exit 1
fi
