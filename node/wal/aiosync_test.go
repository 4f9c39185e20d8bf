//go:build linux && (amd64 || arm64)

package wal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// With SyncBeside, the log's fdatasyncs go through AIO, and what they
// synced reads back after a reopen.
func TestSyncBesideUsesAIO(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	opts := Options{SyncEveryBatch: true, SyncBeside: true, SegmentSize: 8 << 10}
	before := aioSyncs.Load()
	l := open(t, dir, opts)
	m := model{}
	appendRandom(t, r, l, m, 1, 300, 1)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if aioOff() {
		t.Skip("Linux AIO is unavailable here: the plain fdatasync ran")
	}
	if got := aioSyncs.Load() - before; got < 10 {
		t.Fatalf("%d fdatasyncs through AIO for 300 entries synced batch by batch", got)
	}
	l.Close()
	l = open(t, dir, opts)
	checkLog(t, l, m, 1, 300)
}

// Syncs from many goroutines at once each reap their own completion,
// with one thread running Go code as on a small machine.
func TestSyncBesideConcurrent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dir := t.TempDir()
	before := aioSyncs.Load()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.CreateTemp(dir, "f")
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			for k := range 20 {
				if _, err := f.Write([]byte{byte(i), byte(k)}); err != nil {
					errs <- err
					return
				}
				if err := datasyncBeside(f); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := aioSyncs.Load() - before; !aioOff() && got != 160 {
		t.Fatalf("%d of 160 syncs through AIO", got)
	}
}

// A descriptor that cannot be synced fails as the plain call does.
func TestSyncBesideRefused(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	plain, beside := datasync(pw), datasyncBeside(pw)
	if !errors.Is(plain, syscall.EINVAL) || !errors.Is(beside, syscall.EINVAL) {
		t.Fatalf("fdatasync of a pipe: plain %v, through AIO %v; want EINVAL from both", plain, beside)
	}
}

// aioOff reports whether AIO was found unavailable here.
func aioOff() bool {
	aio.mu.Lock()
	defer aio.mu.Unlock()
	return aio.off
}

// A log whose syncs should go through AIO says once when they cannot,
// and syncs all the same; with AIO available it says nothing.
func TestSyncBesideSaysWhenUnavailable(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprint("off=", off), func(t *testing.T) {
			if !off && aioOff() {
				t.Skip("Linux AIO is unavailable here")
			}
			if off {
				aio.mu.Lock()
				was, why := aio.off, aio.why
				aio.off, aio.why = true, syscall.EPERM
				aio.mu.Unlock()
				defer func() {
					aio.mu.Lock()
					aio.off, aio.why = was, why
					aio.mu.Unlock()
				}()
			}
			var mu sync.Mutex
			var lines []string
			dir := t.TempDir()
			opts := Options{SyncEveryBatch: true, SyncBeside: true, Logf: func(format string, args ...any) {
				mu.Lock()
				lines = append(lines, fmt.Sprintf(format, args...))
				mu.Unlock()
			}}
			l, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := testutil.Rand(t, 0)
			m := model{}
			appendRandom(t, r, l, m, 1, 50, 1)
			checkLog(t, l, m, 1, 50)
			mu.Lock()
			defer mu.Unlock()
			told := 0
			for _, line := range lines {
				if strings.Contains(line, "AIO is unavailable (operation not permitted)") {
					told++
				}
			}
			if want := map[bool]int{false: 0, true: 1}[off]; told != want {
				t.Fatalf("told %d times that AIO is unavailable, want %d; log lines: %q", told, want, lines)
			}
		})
	}
}

// A sync's wait reads the eventfd before it reaps the completion. A
// completion that came before the wait must still end it, the eventfd
// read back to zero, so that the slot's next wait is for its own sync.
func TestSyncBesideCompletionBeforeWait(t *testing.T) {
	if aioOff() {
		t.Skip("AIO is unavailable here")
	}
	f, err := os.Create(t.TempDir() + "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := takeSlot()
	if s == nil {
		t.Skip("AIO is unavailable here")
	}
	for i, pause := range []time.Duration{50 * time.Millisecond, 0, 20 * time.Millisecond} {
		if _, err := f.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := s.submit(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		// After a pause the worker has finished before the wait starts;
		// without one the wait mostly comes first.
		time.Sleep(pause)
		done := make(chan error, 1)
		go func() {
			ev, err := s.wait()
			if err == nil && ev.res < 0 {
				err = syscall.Errno(-ev.res)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("sync %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			// The slot stays out of the pool: its wait still reads.
			t.Fatalf("sync %d (%v after the submit): the wait did not end", i, pause)
		}
		var buf [8]byte
		if n, err := syscall.Read(s.efd, buf[:]); err != syscall.EAGAIN {
			t.Fatalf("sync %d: the eventfd still counts a completion after the wait (read %d, %v)", i, n, err)
		}
	}
	putSlot(s)
}
