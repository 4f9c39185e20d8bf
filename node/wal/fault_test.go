package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/raft"
)

// faults is an Options.Inject that fails the operations it is told to.
type faults struct {
	mu   sync.Mutex
	fail map[Op]error
}

func (f *faults) set(op Op, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[Op]error{}
	}
	if err == nil {
		delete(f.fail, op)
	} else {
		f.fail[op] = err
	}
}

func (f *faults) inject(op Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail[op]
}

// TestFailedAppendIsCut: an append whose write or fdatasync fails (half
// the batch written) returns the error and leaves the log exactly as it
// was, in memory and on disk, even across a crash; the next append works.
func TestFailedAppendIsCut(t *testing.T) {
	for _, op := range []Op{OpWrite, OpSync} {
		for _, sync := range []bool{true, false} {
			if op == OpSync && !sync {
				continue
			}
			t.Run(fmt.Sprintf("%s/sync=%v", op, sync), func(t *testing.T) {
				r := testutil.Rand(t, 0)
				dir := t.TempDir()
				var fs faults
				l := open(t, dir, Options{SyncEveryBatch: sync, Inject: fs.inject})
				m := model{}
				appendRandom(t, r, l, m, 1, 50, 1)
				_, size := lastSegment(t, dir)
				fs.set(op, syscall.EIO)
				for range 3 {
					err := l.StoreLogs([]*raft.Log{mkLog(r, 51, 1), mkLog(r, 52, 1)})
					if !errors.Is(err, syscall.EIO) {
						t.Fatalf("StoreLogs with a failing %s: %v, want EIO", op, err)
					}
					if _, now := lastSegment(t, dir); now != size {
						t.Fatalf("segment is %d bytes after a failed append, was %d", now, size)
					}
					checkLog(t, l, m, 1, 50)
				}
				checkRecovers(t, r, copyDir(t, dir), m, 50) // a crash now
				fs.set(op, nil)
				appendRandom(t, r, l, m, 51, 80, 1)
				l.Close()
				l = open(t, dir, Options{})
				checkLog(t, l, m, 1, 80)
			})
		}
	}
}

// TestFailedCutIsRepaired: when cutting a failed append fails too, the
// next append cuts it first, and only then appends.
func TestFailedCutIsRepaired(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	var fs faults
	l := open(t, dir, Options{SyncEveryBatch: true, Inject: fs.inject})
	m := model{}
	appendRandom(t, r, l, m, 1, 50, 1)
	fs.set(OpWrite, syscall.ENOSPC)
	fs.set(OpTruncate, syscall.EIO)
	if err := l.StoreLog(mkLog(r, 51, 1)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("StoreLog: %v, want ENOSPC", err)
	}
	fs.set(OpWrite, nil)
	if err := l.StoreLog(mkLog(r, 51, 1)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("StoreLog while the cut still fails: %v, want EIO", err)
	}
	fs.set(OpTruncate, nil)
	appendRandom(t, r, l, m, 51, 60, 1)
	l.Close()
	l = open(t, dir, Options{})
	checkLog(t, l, m, 1, 60)
}

// TestFailedSegmentCreation: a new segment that cannot be created or
// recorded leaves no file behind; the append is retried into it later.
func TestFailedSegmentCreation(t *testing.T) {
	for _, op := range []Op{OpCreate, OpManifest} {
		t.Run(string(op), func(t *testing.T) {
			r := testutil.Rand(t, 0)
			dir := t.TempDir()
			var fs faults
			l := open(t, dir, Options{SegmentSize: 2 << 10, Inject: fs.inject})
			m := model{}
			appendRandom(t, r, l, m, 1, 20, 1)
			fs.set(op, syscall.ENOSPC)
			var next uint64 = 21
			var err error
			for ; next < 500; next++ { // until a new segment is needed
				e := mkLog(r, next, 1)
				if err = l.StoreLog(e); err != nil {
					break
				}
				m[next] = e
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("StoreLog into a new segment: %v, want ENOSPC", err)
			}
			if _, err := os.Stat(filepath.Join(dir, segmentName(next))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("failed segment left behind: %v", err)
			}
			checkRecovers(t, r, copyDir(t, dir), m, next-1)
			fs.set(op, nil)
			appendRandom(t, r, l, m, next, next+50, 1)
			l.Close()
			l = open(t, dir, Options{})
			checkLog(t, l, m, 1, next+50)
		})
	}
}

// TestSyncFailure: everysec's Sync reports a failed fdatasync, and a later
// one syncs what the failed one did not.
func TestSyncFailure(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	var fs faults
	l := open(t, dir, Options{Inject: fs.inject})
	m := model{}
	appendRandom(t, r, l, m, 1, 50, 1)
	fs.set(OpSync, syscall.EIO)
	if err := l.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync: %v, want EIO", err)
	}
	l.mu.RLock()
	s := l.segs[0]
	l.mu.RUnlock()
	if s.synced == s.size {
		t.Fatal("a failed Sync counted as synced")
	}
	fs.set(OpSync, nil)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if s.synced != s.size {
		t.Fatalf("synced %d of %d after a successful Sync", s.synced, s.size)
	}
}

// TestFullDisk fills a real (tmpfs) file system: appends fail with ENOSPC
// and change nothing; once space is freed they resume, and a reopen finds
// exactly what was acknowledged.
func TestFullDisk(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprint("sync=", sync), func(t *testing.T) {
			r := testutil.Rand(t, 0)
			mnt := t.TempDir()
			testutil.MountTmpfs(t, mnt, 1<<20)
			ballast := filepath.Join(mnt, "ballast")
			if err := os.WriteFile(ballast, make([]byte, 256<<10), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(mnt, "wal")
			opts := Options{SyncEveryBatch: sync, SegmentSize: 64 << 10}
			l := open(t, dir, opts)
			m := model{}
			var next uint64 = 1
			var err error
			var refused *raft.Log
			for ; ; next++ {
				refused = mkLog(r, next, 1)
				refused.Data = make([]byte, 1000)
				if err = l.StoreLog(refused); err != nil {
					break
				}
				m[next] = refused
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append on a full disk: %v, want ENOSPC", err)
			}
			t.Logf("disk full after %d entries: %v", next-1, err)
			// The same entry again, as Raft retries it (a smaller one
			// may fit in what is left of the last page).
			for range 3 {
				if err := l.StoreLog(refused); !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("append again: %v, want ENOSPC", err)
				}
			}
			checkLog(t, l, m, 1, next-1)
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			appendRandom(t, r, l, m, next, next+100, 1)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = open(t, dir, opts)
			checkLog(t, l, m, 1, next+100)
		})
	}
}

// countSyncs is an Options.Inject that counts fdatasyncs.
type countSyncs struct{ n int }

func (c *countSyncs) inject(op Op) error {
	if op == OpSync {
		c.n++
	}
	return nil
}

// StoreLogsDeferred writes without an fdatasync even in a log that syncs
// every batch; the next Sync makes it durable, and a log reopened with
// such a tail not known synced syncs it at its first Sync.
func TestDeferredAppendIsSyncedBySync(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	var c countSyncs
	l := open(t, dir, Options{SyncEveryBatch: true, Inject: c.inject})
	m := model{}
	appendRandom(t, r, l, m, 1, 10, 1)
	l.mu.RLock()
	s := l.segs[0]
	l.mu.RUnlock()
	if s.synced != s.size {
		t.Fatalf("synced %d of %d after synced appends", s.synced, s.size)
	}
	before := c.n
	if err := l.StoreLogsDeferred([]*raft.Log{mkLog(r, 11, 1), mkLog(r, 12, 1)}); err != nil {
		t.Fatal(err)
	}
	if c.n != before {
		t.Fatalf("a deferred append ran %d fdatasyncs", c.n-before)
	}
	if s.synced == s.size {
		t.Fatal("a deferred append counted as synced")
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if c.n != before+1 || s.synced != s.size {
		t.Fatalf("Sync: %d fdatasyncs, synced %d of %d", c.n-before, s.synced, s.size)
	}

	// A tail written but not synced when the process ended: the files
	// as they are, copied before Close syncs them.
	if err := l.StoreLogsDeferred([]*raft.Log{mkLog(r, 13, 1)}); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir)
	var c2 countSyncs
	l2 := open(t, crashed, Options{SyncEveryBatch: true, Inject: c2.inject})
	l2.mu.RLock()
	s2 := l2.segs[0]
	l2.mu.RUnlock()
	if s2.synced == s2.size {
		t.Fatal("the reopened log records its unsynced tail as synced")
	}
	if err := l2.Sync(); err != nil {
		t.Fatal(err)
	}
	if c2.n != 1 || s2.synced != s2.size {
		t.Fatalf("first Sync after reopening: %d fdatasyncs, synced %d of %d", c2.n, s2.synced, s2.size)
	}
}
