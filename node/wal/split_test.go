package wal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/raft"
)

// lowBatchLimit makes the largest batch small for the test.
func lowBatchLimit(t *testing.T, n int) {
	old := batchLimit
	batchLimit = n
	t.Cleanup(func() { batchLimit = old })
}

// bigLogs returns n entries from index first on, each with size bytes of
// data, recorded in m.
func bigLogs(r *rand.Rand, m model, first uint64, n, size int) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		e := &raft.Log{Index: first + uint64(i), Term: 1, Type: raft.LogCommand, Data: make([]byte, size)}
		for k := range e.Data {
			e.Data[k] = byte(r.Uint32())
		}
		logs[i], m[e.Index] = e, e
	}
	return logs
}

// TestLargeStoreIsSplit: entries that together pass the largest batch
// are written as several batches and read back, after a reopen too; one
// entry larger than a batch is refused with ErrEntryTooLarge and nothing
// of its call is stored.
func TestLargeStoreIsSplit(t *testing.T) {
	lowBatchLimit(t, 4096)
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	l := open(t, dir, Options{SyncEveryBatch: true})
	m := model{}
	appendRandom(t, r, l, m, 1, 10, 1)
	if err := l.StoreLogs(bigLogs(r, m, 11, 20, 1000)); err != nil {
		t.Fatalf("StoreLogs of 20 KB in batches of 4 KB: %v", err)
	}
	checkLog(t, l, m, 1, 30)

	tooBig := bigLogs(r, model{}, 31, 2, 100)
	tooBig[1].Data = make([]byte, 4096)
	if err := l.StoreLogs(tooBig); !errors.Is(err, ErrEntryTooLarge) {
		t.Fatalf("StoreLogs of an entry larger than a batch: %v, want ErrEntryTooLarge", err)
	}
	checkLog(t, l, m, 1, 30)
	appendRandom(t, r, l, m, 31, 40, 1)
	l.Close()
	l = open(t, dir, Options{})
	checkLog(t, l, m, 1, 40)
}

// countedFaults fails the nth write and no other.
type countedFaults struct {
	writes, nth atomic.Int64
}

func (f *countedFaults) inject(op Op) error {
	if op == OpWrite && f.writes.Add(1) == f.nth.Load() {
		return syscall.EIO
	}
	return nil
}

// TestSplitStoreIsAllOrNothing: when a later batch of a split StoreLogs
// fails, the batches before it are cut too, in memory and on disk (a
// crash right after recovers the log as it was), and the next append
// works; from an empty log as from one with entries, in both sync modes.
func TestSplitStoreIsAllOrNothing(t *testing.T) {
	lowBatchLimit(t, 4096)
	for _, before := range []uint64{0, 10} {
		for _, sync := range []bool{true, false} {
			t.Run(fmt.Sprintf("entries=%d/sync=%v", before, sync), func(t *testing.T) {
				r := testutil.Rand(t, 0)
				dir := t.TempDir()
				var fs countedFaults
				l := open(t, dir, Options{SyncEveryBatch: sync, Inject: fs.inject})
				m := model{}
				if before > 0 {
					appendRandom(t, r, l, m, 1, before, 1)
				}
				fs.writes.Store(0)
				fs.nth.Store(3) // the third of five batches
				if err := l.StoreLogs(bigLogs(r, model{}, before+1, 20, 1000)); !errors.Is(err, syscall.EIO) {
					t.Fatalf("StoreLogs whose third batch fails: %v, want EIO", err)
				}
				checkLog(t, l, m, min(before, 1), before)
				if before > 0 {
					checkRecovers(t, r, copyDir(t, dir), m, before) // a crash now
				} else {
					c := open(t, copyDir(t, dir), Options{})
					checkLog(t, c, m, 0, 0)
					c.Close()
				}
				fs.nth.Store(0)
				if err := l.StoreLogs(bigLogs(r, m, before+1, 20, 1000)); err != nil {
					t.Fatalf("StoreLogs after: %v", err)
				}
				checkLog(t, l, m, 1, before+20)
				l.Close()
				l = open(t, dir, Options{})
				checkLog(t, l, m, 1, before+20)
			})
		}
	}
}
