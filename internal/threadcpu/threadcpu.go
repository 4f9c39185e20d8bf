// Package threadcpu reads the calling thread's CPU time (and the whole
// process's), for benchmarks and measurements on a busy shared machine:
// what a step cost apart from the time it waited for a CPU. Callers of Now
// lock their goroutine to its thread (runtime.LockOSThread) around what
// they measure.
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
	return cpuClock(clockThreadCPUTimeID)
}

// Process returns the CPU time of the whole process, every thread's user
// and system time, in nanoseconds (CLOCK_PROCESS_CPUTIME_ID), or 0 where
// the clock is not available: for what a step costs across goroutines.
func Process() int64 {
	const clockProcessCPUTimeID = 2
	return cpuClock(clockProcessCPUTimeID)
}

// cpuClock reads a CPU-time clock of clock_gettime.
func cpuClock(id uintptr) int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}
