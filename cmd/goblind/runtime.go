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
// procs 0 means half the CPUs the process may use, at least one. A write
// travels RESP goroutine → Raft leader → FSM → RESP goroutine; on one
// thread each hand-off is a direct switch, while with more threads idle
// ones are woken (futex) to steal the new goroutine, which costs more than
// the work itself. Measured on 2 vCPUs: one thread answers a
// reply-per-command client about 1.5× faster, and pipelined loads from 50
// connections run as fast as with two (docs/benchmarks.md). The other half
// is left to the kernel's network stack, the disk and the clients.
func tuneRuntime(procs, gcPercent int) (string, error) {
	if procs < 0 {
		return "", fmt.Errorf("--procs must be ≥ 0")
	}
	if procs == 0 && os.Getenv("GOMAXPROCS") == "" {
		procs = max(1, runtime.GOMAXPROCS(0)/2)
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
