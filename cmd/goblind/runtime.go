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
//
// procs 0 means Go's default: every CPU the process may use. With one
// thread, a goroutine blocked in the log's fdatasync holds the only one
// until the runtime takes it back, so the disk and the CPU take turns:
// measured on 2 vCPUs with redis-benchmark -c 50 ZADD under --fsync
// always, two threads ran 1.2-3.6x faster than one at -P 1 and 3.7x at
// -P 16 (150k against 40k commands a second), 1.3-1.7x under everysec,
// and one client with one command in flight as fast (docs/benchmarks.md).
func tuneRuntime(procs, gcPercent int) (string, error) {
	if procs < 0 {
		return "", fmt.Errorf("--procs must be ≥ 0")
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
