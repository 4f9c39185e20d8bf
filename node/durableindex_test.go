package node

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node/wal"
)

// Under always an applied write is durable at once; under everysec once
// a sync that began after it succeeds, and not while syncs fail.
func TestDurableIndex(t *testing.T) {
	n := startNode(t, Config{Fsync: FsyncAlways})
	if err := addK(n, "a", 1); err != nil {
		t.Fatal(err)
	}
	if got, want := n.DurableIndex(), n.AppliedIndex(); got != want || !n.SyncsAlways() {
		t.Fatalf("always: durable index %d, applied %d", got, want)
	}

	var d diskFaults
	e := startFaulty(t, t.TempDir(), LogStoreWAL, FsyncEverysec, d.inject)
	if e.SyncsAlways() {
		t.Fatal("everysec reports that it syncs always")
	}
	if err := addK(e, "a", 1); err != nil {
		t.Fatal(err)
	}
	first := e.AppliedIndex()
	testutil.Poll(t, 10*time.Second, "the first write to be durable", func() bool { return e.DurableIndex() >= first })
	d.set(wal.OpSync, syscall.EIO)
	if err := addK(e, "b", 2); err != nil {
		t.Fatal(err)
	}
	second := e.AppliedIndex()
	testutil.Poll(t, 10*time.Second, "a failing sync", func() bool { return e.LogFault() != nil })
	if got := e.DurableIndex(); got >= second {
		t.Fatalf("durable index %d covers write %d while syncs fail", got, second)
	}
	d.set(wal.OpSync, nil)
	testutil.Poll(t, 10*time.Second, "the second write to be durable", func() bool { return e.DurableIndex() >= second })
}

// An append made while the once-a-second sync runs is not counted as
// synced by it: the next tick syncs again, though nothing was appended
// after the sync ended.
func TestEverysecSyncsWhatWasAppendedDuringASync(t *testing.T) {
	s := &stores{stop: make(chan struct{}), guard: newLogGuard(raft.NewInmemStore(), 16, hclog.NewNullLogger())}
	var syncs atomic.Int32
	s.sync = func() error {
		if syncs.Add(1) == 1 {
			s.stats.unsyncedEntries.Add(1) // appended while the first sync runs
		}
		return nil
	}
	applied := func() uint64 { return 7 }
	s.applied.Store(&applied)
	s.stats.unsyncedEntries.Store(3)
	s.wg.Add(1)
	go s.syncEverySecond()
	defer func() { close(s.stop); s.wg.Wait() }()
	testutil.Poll(t, 10*time.Second, "a second sync", func() bool { return syncs.Load() >= 2 })
	if got := s.syncedApplied.Load(); got != 7 {
		t.Fatalf("synced applied index %d, want 7", got)
	}
	if got := s.stats.syncedEntries.Load(); got != 4 {
		t.Fatalf("%d entries counted synced, want 4", got)
	}
}
