# bench/lib.sh: what the scripts in bench/ share.
# Sourced, not run.

# freeport: a loopback port below the kernel's ephemeral range (so no
# outgoing connection can take it meanwhile) that is free for TCP and UDP
# (gossip listens on both), and, where the script has its WORK directory,
# not one it handed out before: a cluster's ports are all picked before
# its servers bind them, and a port picked twice left one server without.
freeport() {
	FREEPORTS="${WORK:+$WORK/.freeports}" python3 - <<'EOF'
import os, random, socket
used = os.environ["FREEPORTS"]
taken = set()
if used and os.path.exists(used):
    taken = {int(l) for l in open(used) if l.strip()}
while True:
    p = random.randint(20000, 32000)
    if p in taken:
        continue
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", p))
        print(p)
        if used:
            with open(used, "a") as f:
                f.write("%d\n" % p)
        break
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
EOF
}

# start_goblin_cluster BIN DIR [FLAG...]: three goblind (n0, n1, n2)
# forming one cluster on free loopback ports, node i's data in DIR/n<i>
# and its output in DIR/n<i>.log, each with the flags given. Sets
# CLUSTER_PORTS (their RESP ports, in node order) and CLUSTER_PIDS; the
# caller waits for the role it needs (goblin_leader).
start_goblin_cluster() {
	local bin=$1 dir=$2 i seeds gossip=()
	shift 2
	CLUSTER_PORTS=()
	CLUSTER_PIDS=()
	for i in 0 1 2; do
		CLUSTER_PORTS+=("$(freeport)")
		gossip+=("127.0.0.1:$(freeport)")
	done
	seeds=$(IFS=,; echo "${gossip[*]}")
	for i in 0 1 2; do
		mkdir -p "$dir/n$i"
		"$bin" --id "n$i" --addr "127.0.0.1:${CLUSTER_PORTS[$i]}" --raft-addr "127.0.0.1:$(freeport)" \
			--gossip-addr "${gossip[$i]}" --join "$seeds" --bootstrap-expect 3 --data "$dir/n$i" \
			"$@" >"$dir/n$i.log" 2>&1 &
		CLUSTER_PIDS+=($!)
	done
}

# goblin_leader: prints the port, among CLUSTER_PORTS, of the node that
# leads, once one does (bounded); fails if none does.
goblin_leader() {
	local p
	for _ in $(seq 300); do
		for p in "${CLUSTER_PORTS[@]}"; do
			if [ "$(redis-cli -p "$p" ROLE 2>/dev/null | head -1)" = master ]; then
				echo "$p"
				return 0
			fi
		done
		sleep 0.1
	done
	echo "3-node cluster elected no leader" >&2
	return 1
}

# waitping PORT: until the server answers PING (bounded).
waitping() {
	for _ in $(seq 300); do
		[ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	echo "server on port $1 did not answer PING" >&2
	return 1
}

# machine_info: the machine, the versions and the load, one "key: value"
# per line; the caller adds its settings.
machine_info() {
	echo "date: $(date -u +%FT%TZ)"
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
	echo "kernel: $(uname -sr)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
	echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
	echo "go: $(go version | cut -d' ' -f3-)"
	echo "redis-server: $(redis-server --version)"
	echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	# Servers started from this script share its session's scheduling group
	# with the clients where autogroup is on (docs/benchmarks.md, "Where the
	# servers run").
	echo "sched_autogroup_enabled: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo absent)"
	# goblind's flags given through the environment reach the servers the
	# scripts start (GOBLIN_EVENT_LOOP=on, say): recorded, secrets by name
	# only.
	local name
	while IFS='=' read -r name _; do
		case $name in
		*SECRET* | *PASS* | *KEY*) echo "environment: $name (set)" ;;
		*) echo "environment: $name=${!name}" ;;
		esac
	done < <(env | grep -E '^(GOBLIN_[A-Z0-9_]*|GOMAXPROCS|GOGC)=' | sort)
}

# workdir NAME: sets WORK to a new temporary directory, removed when the
# script ends, after the processes it started are stopped: PID (one server),
# SPIDS (the servers of the engine being measured) and PIDS (any others),
# which the script keeps up to date as it starts them. Ctrl-C or a TERM ends
# the script (once the command under way returns).
workdir() {
	WORK=$(mktemp -d "/tmp/goblin-$1.XXXXXX")
	PID=""
	SPIDS=()
	PIDS=()
	trap stop_and_clean EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

stop_and_clean() {
	# shellcheck disable=SC2086 # PID is empty or one number
	stop_pids $PID "${SPIDS[@]}" "${PIDS[@]}"
	rm -rf "$WORK"
}

# stop_pids PID...: stops the processes (TERM), and waits for them.
stop_pids() {
	local pid
	for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
	for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}

# stop_engine: stops the servers of the engine being measured (SPIDS).
stop_engine() {
	stop_pids "${SPIDS[@]}"
}

# need_tools PACKAGES TOOL...: exits, naming the Debian packages, unless
# every TOOL is on PATH.
need_tools() {
	local pkgs=$1 tool
	shift
	for tool in "$@"; do
		command -v "$tool" >/dev/null || {
			echo "needs $tool (apt-get install -y $pkgs)" >&2
			exit 1
		}
	done
}

# goblind_binary DIR: sets GOBLIND to $GOBLIND if given, else to goblind
# built from this tree into DIR.
goblind_binary() {
	if [ -z "${GOBLIND:-}" ]; then
		echo "== building goblind into $1"
		go build -o "$1/goblind" ./cmd/goblind
		GOBLIND="$1/goblind"
	fi
}
