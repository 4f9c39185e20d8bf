package main

import (
	"os"
	"strings"
	"syscall"
)

// Go's scheduler has a monitor thread (sysmon) that takes a thread back
// from a goroutine blocked in a system call, such as the log's fdatasync.
// When every thread of the process is idle it sleeps until the next
// system call wakes it, and on waking it polls every 20 µs for a while.
// A server that goes idle between one client's commands, as goblind does
// waiting for the next request, pays for that on every command: a futex
// wake-up, the monitor's thread switches and its polling, on the CPUs the
// clients and the other nodes need. Measured with one client and one
// command in flight on one CPU, it was a fifth of goblind's CPU per
// command (docs/benchmarks.md).
//
// The monitor stays awake, and backs off to a 10 ms poll on its own when
// there is nothing to take back, when the runtime's scheduler trace is
// on: GODEBUG schedtrace, whose period goblind sets to the largest the
// runtime takes (about 24.8 days). GODEBUG is read once, when the runtime
// starts, so goblind executes itself again with it set, keeping its
// process ID, arguments and environment. Side effect: Go writes one line
// "SCHED …" to standard error each period, at start when the machine
// has been up longer than that. GODEBUG=schedtrace=0 (or any schedtrace
// setting) leaves the runtime as the environment says.

// schedtracePeriod is the largest period GODEBUG schedtrace takes, in ms.
const schedtracePeriod = "2147483647"

// keepMonitorAwake executes goblind again with GODEBUG schedtrace set,
// unless the environment sets it already. It returns only when it could
// not: goblind then runs as it is.
func keepMonitorAwake() {
	godebug, set := os.LookupEnv("GODEBUG")
	for _, kv := range strings.Split(godebug, ",") {
		if strings.HasPrefix(strings.TrimSpace(kv), "schedtrace=") {
			return
		}
	}
	if set && godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + "schedtrace=" + schedtracePeriod}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	// /proc/self/exe is this very binary, even when its file was
	// replaced since it started.
	syscall.Exec("/proc/self/exe", os.Args, env)
}
