package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the file in the data directory that the running goblind
// holds an exclusive lock on.
const lockFile = "LOCK"

// lockDataDir creates dir if needed and takes an exclusive lock on its
// LOCK file, without waiting: a second goblind on the same directory
// fails at once, naming the process that holds it, instead of waiting
// forever on the stores' own file locks (or, for the log segments, which
// have none, writing beside the first). The lock is the kernel's (flock):
// it goes with the process, so a killed goblind leaves none behind. The
// returned function releases it.
func lockDataDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (process %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another goblind%s", dir, holder)
		}
		return nil, fmt.Errorf("data directory: locking %s: %w", path, err)
	}
	// The holder's pid, for the message above and for operators.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
