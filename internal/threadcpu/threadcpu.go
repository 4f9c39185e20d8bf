// Package threadcpu reads the calling thread's CPU time, for benchmarks
// and measurements on a busy shared machine: what a step cost apart from
// the time it waited for a CPU. Callers lock their goroutine to its
// thread (runtime.LockOSThread) around what they measure.
package threadcpu

import (
	"syscall"
	"unsafe"
)

// Now returns the calling thread's CPU time in nanoseconds, from
// clock_gettime(CLOCK_THREAD_CPUTIME_ID), which the kernel keeps to the
// nanosecond (getrusage(RUSAGE_THREAD) advances in scheduler ticks of a
// few milliseconds), or 0 where the clock is not available.
func Now() int64 {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}
