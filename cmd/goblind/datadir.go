package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the file in the data directory that the running goblind
// holds an exclusive lock on.
const lockFile = "LOCK"

// dataDir is a data directory locked by this process.
type dataDir struct {
	f *os.File
	// made is the topmost directory lockDataDir created, "" when dir
	// existed before.
	made string
}

// lockDataDir creates dir if needed and takes an exclusive lock on its
// LOCK file, without waiting: a second goblind on the same directory
// fails at once, naming the process that holds it, instead of waiting
// forever on the stores' own file locks (or, for the log segments, which
// have none, writing beside the first). The lock is the kernel's (flock):
// it goes with the process, so a killed goblind leaves none behind.
func lockDataDir(dir string) (*dataDir, error) {
	made := firstMissing(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	d := &dataDir{made: made}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		d.discardNew()
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
		d.discardNew()
		return nil, fmt.Errorf("data directory: locking %s: %w", path, err)
	}
	d.f = f
	// The holder's pid, for the message above and for operators.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return d, nil
}

// unlock releases the lock.
func (d *dataDir) unlock() {
	if d.f != nil {
		d.f.Close()
		d.f = nil
	}
}

// discardNew releases the lock and, when lockDataDir created the
// directory, removes it with everything in it: what a start or a restore
// that was refused leaves behind. Only for a directory that never served
// anything.
func (d *dataDir) discardNew() {
	d.unlock()
	if d.made != "" {
		os.RemoveAll(d.made)
		d.made = ""
	}
}

// firstMissing is the topmost directory on the way to dir that does not
// exist, "" when dir exists (or cannot be told).
func firstMissing(dir string) string {
	missing := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			return missing
		} else if !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		missing = d
		if filepath.Dir(d) == d {
			return missing
		}
	}
}
