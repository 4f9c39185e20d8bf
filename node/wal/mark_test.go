package wal

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// headerMark reads the sync mark of the segment at path (base 1).
func headerMark(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := parseMark(b[:segHeaderLenV2], 1)
	if !ok {
		t.Fatalf("%s: damaged sync mark", path)
	}
	return m
}

// TestMarkFollowsQuietly: appends in a burst do not each rewrite the sync
// mark, and once they stop the mark catches up with the final batch within
// markDelay, without a fdatasync of its own and without waiting for Close.
func TestMarkFollowsQuietly(t *testing.T) {
	r := testutil.Rand(t, 0)
	var syncs atomic.Int64
	dir := t.TempDir()
	l := open(t, dir, Options{SyncEveryBatch: true, OnSync: func(time.Duration) { syncs.Add(1) }})
	defer l.Close()
	appendRandom(t, r, l, model{}, 1, 1, 1)
	path, first := lastSegment(t, dir)
	if m := headerMark(t, path); m != first {
		t.Fatalf("mark %d after the first batch, want %d: a log that has not marked for markDelay marks at once", m, first)
	}
	// A burst: however long it takes, the mark is written at most twice
	// per markDelay (after a fdatasync, and by the timer), so it cannot
	// follow all of its batches.
	start := time.Now()
	marks := map[int64]bool{}
	for i := uint64(2); i <= 200; i++ {
		appendRandom(t, r, l, model{}, i, i, 1)
		marks[headerMark(t, path)] = true
	}
	if limit := 2*int(time.Since(start)/markDelay) + 3; len(marks) > limit {
		t.Fatalf("%d distinct marks during a burst of %v, want at most %d", len(marks), time.Since(start), limit)
	}
	_, size := lastSegment(t, dir)
	n := syncs.Load()
	const patience = 5 * time.Second // markDelay, on a loaded machine
	deadline := time.Now().Add(patience)
	for headerMark(t, path) != size {
		if time.Now().After(deadline) {
			t.Fatalf("mark %d %v after the burst, want %d", headerMark(t, path), patience, size)
		}
		time.Sleep(markDelay / 10)
	}
	if got := syncs.Load() - n; got != 0 {
		t.Fatalf("%d fdatasyncs after the burst, for the mark alone: want none (the next append's carries it)", got)
	}
}
