//go:build unix

package freeport

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// A port is claimed by an exclusive flock on a file named after it in a
// directory shared by every process on the machine. The lock lives as
// long as its descriptor, which is kept open: it ends with the process,
// however the process ends, so a claim never outlives its holder and no
// stale file needs cleaning (the files stay, empty: a claim is the lock,
// not the file).
var (
	claimMu sync.Mutex
	claimed []*os.File // kept open: closing one would release its claim
)

// claimDir makes, once, the directory of the claim files and returns it
// ("" when it cannot be made).
var claimDir = sync.OnceValue(func() string {
	dir := filepath.Join(os.TempDir(), "goblin-freeport")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return ""
	}
	os.Chmod(dir, 0o777|os.ModeSticky) // shared by every user's tests
	return dir
})

// claim reports whether this process now holds port: false when another
// live process (or another descriptor of this one) holds it. Without a
// usable claim directory every port is taken as claimed, and the
// per-process check stands alone.
func claim(port int) bool {
	dir := claimDir()
	if dir == "" {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	claimMu.Lock()
	claimed = append(claimed, f)
	claimMu.Unlock()
	return true
}
