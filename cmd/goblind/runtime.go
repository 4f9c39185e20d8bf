package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
)

// tuneRuntime sets how many threads run Go code at once and how much the
// heap may grow between collections. An environment GOMAXPROCS or GOGC
// wins over the defaults (not over an explicit flag).
func tuneRuntime(procs, gcPercent int) (string, error) {
	if procs < 0 {
		return "", fmt.Errorf("--procs must be ≥ 0")
	}
	if procs == 0 {
		_, set := os.LookupEnv("GOMAXPROCS")
		procs = defaultProcs(runtime.GOMAXPROCS(0), set)
	}
	if procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
	if gcPercent != 0 || os.Getenv("GOGC") == "" {
		if gcPercent == 0 {
			gcPercent = defaultGCPercent
		}
		debug.SetGCPercent(gcPercent)
	}
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	return fmt.Sprintf("procs=%d gogc=%d", runtime.GOMAXPROCS(0), gc), nil
}

// defaultProcs is --procs 0: one thread when the process may use two CPUs
// or fewer (Go's default, available, counts the CPUs the process may run
// on and its container's CPU limit), every CPU otherwise, and whatever an
// environment GOMAXPROCS says (set); 0 leaves Go's choice.
//
// A write's way through Raft's goroutines (the client's, group commit's,
// Raft's leader loop, the log's fdatasync, the state machine's) wakes a
// second thread at each hand-off when there is one, and on a machine of
// two CPUs that thread takes the CPU the clients, or whatever else shares
// the machine, were using. Measured on 2 vCPUs with redis-benchmark -c 50
// on the same machine, --fsync always: ZADD -P 1 on a single node ran
// 1.2-1.4x faster on one thread, at 13.6 µs of CPU a write against 22;
// through a 3-node cluster's leader about as fast, at a quarter less CPU
// (docs/benchmarks.md, "One thread"). Group commit makes one thread's
// batches (submitYielding in node/groupcommit.go).
func defaultProcs(available int, set bool) int {
	if set || available > 2 {
		return 0
	}
	return 1
}

// defaultGCPercent is GOGC unless --gogc or the environment says
// otherwise. Resident memory follows the heap goal, live × (1 + GOGC/100):
// 75 instead of Go's 100 kept goblind's RSS after the 2,000,000-command
// replay at 0.74× redis-server's instead of 0.99× (docs/benchmarks.md),
// for about a quarter more collections of a small live heap.
const defaultGCPercent = 75

// useEventLoop decides --event-loop (auto, on or off) once the runtime is
// tuned. With more than one thread running Go code, connections served by
// goroutines of their own use them all (reads above all); with one, the
// hand-offs between the goroutines a write passes through cost more than
// its work, and a fdatasync holds the only thread while clients wait to
// run, which the event loop avoids (docs/benchmarks.md).
func useEventLoop(mode string) bool {
	return mode == "on" || mode == "auto" && runtime.GOMAXPROCS(0) == 1
}
