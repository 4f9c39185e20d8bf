#!/usr/bin/env bash
# Goblin's test suite: vet, every package's tests under the race detector
# (the e2e tests build goblind and run real processes), the packed
# structures' tests again with their invariant checks after every mutation,
# Redis's own sorted-set and ACL tests, and each fuzz target for a bounded time.
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")"

FUZZTIME=${FUZZTIME:-5s}

# phase prints a phase's heading with the time the run has taken so far.
phase() { printf '== %s (at %dm%02ds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }

# What runs in the background (e2e and Redis's own suites, below) is
# stopped on the way out, and the temporary files removed.
e2e_pid=
suite_pid=
suite_log=$(mktemp)
fuzzbin=$(mktemp -d)
on_exit() {
	[ -z "$e2e_pid" ] || e2e_stop
	[ -z "$suite_pid" ] || kill -- "-$suite_pid" 2>/dev/null || true
	rm -rf "$suite_log" "$fuzzbin"
}
trap on_exit EXIT

phase "Redis's own sorted-set and ACL tests against goblind, beside every phase below"
# The suites (e2e/redis-suite.sh) mostly wait on Redis's Tcl client, one
# command at a time, so they run beside everything else, in a process
# group of their own, so that a failure elsewhere stops them and the
# servers they started. Their output is shown at the end.
if command -v tclsh >/dev/null && command -v redis-server >/dev/null; then
	setsid e2e/redis-suite.sh >"$suite_log" 2>&1 &
	suite_pid=$!
elif [ "${GOBLIN_REQUIRE_REDIS:-}" = 1 ]; then
	echo "tclsh or redis-server missing and GOBLIN_REQUIRE_REDIS=1" >&2
	exit 1
else
	echo "skipped: needs tclsh and redis-server (apt-get install -y tcl redis-server)" >"$suite_log"
fi
suite_done() {
	local rc=0
	[ -z "$suite_pid" ] || wait "$suite_pid" || rc=$?
	suite_pid=
	phase "Redis's own sorted-set and ACL tests (beside the phases above) ended"
	cat "$suite_log"
	return "$rc"
}

phase "go vet"
go vet ./...
# The benchmark tool is its own module (bench/go.mod), so the server's
# go.mod keeps only what goblind uses.
(cd bench && go vet ./...)

phase "go test -race"
# e2e runs real processes and mostly waits on them (clusters forming,
# failovers, Docker): it runs beside everything else up to the fuzzing, so
# its waits overlap the other packages' work. Its output is shown once it
# ends.
e2e_log=$(mktemp)
# In a process group of its own, so that a failure elsewhere stops it and
# every process it started.
export GOBLIN_E2E_RUN="run$$"
setsid go test -race -count=1 -timeout 30m ./e2e >"$e2e_log" 2>&1 &
e2e_pid=$!
e2e_done() {
	local rc=0
	wait "$e2e_pid" || rc=$?
	e2e_pid=
	phase "go test -race ./e2e (beside the phases above) ended"
	cat "$e2e_log"
	rm -f "$e2e_log"
	return "$rc"
}
# A failure elsewhere stops e2e before its tests' cleanups run: the
# containers, networks, volumes and images its Docker tests made, and
# internal/faults' Docker tests too, are named after this run's tag
# (GOBLIN_E2E_RUN), and removed here.
e2e_stop() {
	kill -- "-$e2e_pid" 2>/dev/null || true
	command -v docker >/dev/null || return 0
	local mine="^goblin(-drill)?-e2e-$GOBLIN_E2E_RUN-"
	local kind list
	for kind in container network volume; do
		list=(docker "$kind" ls --format '{{.Name}} {{.Label "com.docker.compose.project"}}')
		[ "$kind" = container ] && list=(docker container ls -a --format '{{.ID}} {{.Label "com.docker.compose.project"}}')
		"${list[@]}" 2>/dev/null | awk -v re="$mine" '$2 ~ re { print $1 }' |
			xargs -r docker "$kind" rm -f >/dev/null 2>&1 || true
	done
	docker image ls --format '{{.Repository}}:{{.Tag}}' 2>/dev/null |
		grep -E "^goblin(-drill)?-e2e:$GOBLIN_E2E_RUN-" | xargs -r docker rmi -f >/dev/null 2>&1 || true
}
go test -race -count=1 -timeout 30m $(go list ./... | grep -v '/e2e$')
# The RESP edge's tests once more, every server with the event loop.
GOBLIN_TEST_EVENT_LOOP=1 go test -race -count=1 -timeout 10m ./resp/
(cd bench && go test -race -count=1 -timeout 10m ./...)
# go-redis's RouteByLatency races inside the client under -race, so that
# check runs without the detector.
go test -count=1 -timeout 5m -run 'TestClusterClients/RouteByLatency' ./e2e
# hashicorp/raft reads a follower's peer record without its lock while a
# configuration change updates the peer's address: the tests of nodes
# coming back at new addresses run without the detector.
go test -count=1 -timeout 5m -run 'TestAllNodesBackAtNewAddresses|TestNodesBackAtEachOthersAddresses' ./cluster

phase "go test -tags invariants ./packed/ (every mutation checks the whole set)"
go test -count=1 -timeout 10m -tags invariants ./packed/

e2e_done

phase "fuzzing (${FUZZTIME} per target)"
# Every Fuzz* function in every package runs alone, bounded in time. Each
# package's test binary is built once, instrumented for fuzzing, and runs
# each of its targets in turn from the package's directory (where its
# corpus and any failing input are, under testdata/fuzz), with the fuzz
# cache go test would use: the same as go test -fuzz per target, without
# linking the binary again for each.
fuzzcache="$(go env GOCACHE)/fuzz"
while read -r pkg; do
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$pkg"/*_test.go | sed 's/func //')
	first=$(echo "$targets" | head -1)
	go test -c -fuzz "^${first}\$" -o "$fuzzbin/fuzz.test" "$pkg"
	importpath=$(go list -f '{{.ImportPath}}' "$pkg")
	for target in $targets; do
		echo "-- $pkg $target"
		log=$(mktemp)
		if ! (cd "$pkg" && "$fuzzbin/fuzz.test" -test.run '^$' -test.fuzz "^${target}\$" \
			-test.fuzztime "$FUZZTIME" -test.timeout 5m -test.fuzzcachedir "$fuzzcache/$importpath") 2>&1 | tee "$log"; then
			# Go 1.26's fuzz coordinator can report its own -fuzztime
			# deadline as a failure (golang/go#75804, fixed in Go 1.27). A
			# real failure always writes its input under testdata/fuzz and
			# says so; a bare deadline report with none is that race.
			if grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log"; then
				echo "   (fuzzing stopped at -fuzztime by golang/go#75804's deadline race; no failing input: not a failure)"
			else
				rm -f "$log"
				exit 1
			fi
		fi
		rm -f "$log"
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)

suite_done

phase "all tests passed"
