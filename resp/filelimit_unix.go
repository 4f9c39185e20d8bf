//go:build unix

package resp

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// raiseFileLimit raises the process's open-files limit (RLIMIT_NOFILE)
// towards need, as far as the system allows, and returns the limit in
// effect. The soft limit can rise to the hard one; the hard one only with
// privilege (CAP_SYS_RESOURCE), and never past the kernel's nr_open.
func raiseFileLimit(need uint64) (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur >= need {
		return rl.Cur, nil
	}
	set := func(cur, max uint64) bool {
		return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: cur, Max: max}) == nil
	}
	if need <= rl.Max {
		if set(need, rl.Max) {
			return need, nil
		}
	} else {
		if set(need, need) {
			return need, nil
		}
		if n := nrOpen(); n > rl.Max && n < need && set(n, n) {
			return n, nil
		}
	}
	if rl.Cur < rl.Max && set(rl.Max, rl.Max) {
		return rl.Max, nil
	}
	return rl.Cur, nil
}

// nrOpen is the kernel's ceiling on the hard limit (0 when unknown).
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}
