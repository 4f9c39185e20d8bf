//go:build linux

package wal

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestAppendsThroughMapping: with preallocation, appends are copied into
// a mapping of the zeros ahead (the window moving as the zeros are
// extended, across segments), and what they wrote is what the file holds:
// read back, after a crash (a copy of the files as they are), and after
// reopening, where appends go on through a new mapping.
func TestAppendsThroughMapping(t *testing.T) {
	r := testutil.Rand(t, 0)
	opts := Options{Preallocate: true, SegmentSize: 3 << 20}
	dir := t.TempDir()
	l := quietOpen(t, dir, opts)
	m := model{}
	var last uint64
	windows := map[[2]int64]bool{}
	for last < 60000 {
		// Batches of one small entry, which go through the mapping, and
		// larger ones, which are written.
		appendRandom(t, r, l, m, last+1, last+100, 1)
		appendSmall(t, r, l, m, last+101, last+500)
		last += 500
		s := l.segs[len(l.segs)-1]
		if s.win.b == nil {
			t.Fatalf("at %d: the active segment has no mapping (content %d, zeros to %d)", last, s.size, s.alloc)
		}
		if s.win.off > s.size || s.win.off+int64(len(s.win.b)) < s.size {
			t.Fatalf("at %d: window [%d, +%d) does not hold the end of the content %d", last, s.win.off, len(s.win.b), s.size)
		}
		windows[[2]int64{int64(s.base), s.win.off}] = true
		for _, sealed := range l.segs[:len(l.segs)-1] {
			if sealed.win.b != nil {
				t.Fatalf("sealed segment %s still mapped", sealed.path)
			}
		}
	}
	if len(l.segs) < 3 || len(windows) < 4 {
		t.Fatalf("%d segments, %d windows: the test should move the window and cross segments", len(l.segs), len(windows))
	}
	checkLog(t, l, m, 1, last)
	crash := copyDir(t, dir)
	c := quietOpen(t, crash, opts)
	checkLog(t, c, m, 1, last)
	c.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = quietOpen(t, dir, opts)
	checkLog(t, l, m, 1, last)
	appendSmall(t, r, l, m, last+1, last+2000)
	if l.segs[len(l.segs)-1].win.b == nil {
		t.Fatal("after reopening, appends are not mapped")
	}
	checkLog(t, l, m, 1, last+2000)
}

// TestMappedWriteFault: when the file under the mapping is cut behind the
// log's back, the copy faults; the append fails with an error instead of
// crashing the process, and the log takes appends again.
func TestMappedWriteFault(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	l := open(t, dir, Options{Preallocate: true})
	m := model{}
	appendRandom(t, r, l, m, 1, 2000, 1)
	// Small appends until the content ends close to a page boundary.
	last := uint64(2000)
	s := l.segs[len(l.segs)-1]
	for pageSize-s.size%pageSize > 64 {
		last++
		e := &raft.Log{Index: last, Term: 1, Data: []byte("x")}
		m[last] = e
		if err := l.StoreLogs([]*raft.Log{e}); err != nil {
			t.Fatal(err)
		}
	}
	if s.win.b == nil {
		t.Fatal("not mapped")
	}
	// Cut the file at that boundary: the next append's copy reaches a
	// page past the end of the file.
	cut := (s.size + pageSize - 1) &^ (pageSize - 1)
	if err := os.Truncate(s.path, cut); err != nil {
		t.Fatal(err)
	}
	e := &raft.Log{Index: last + 1, Term: 1, Data: make([]byte, 200)}
	err := l.StoreLogs([]*raft.Log{e})
	if err == nil {
		t.Fatal("an append through a mapping of a cut file succeeded")
	}
	t.Logf("StoreLogs: %v", err)
	appendRandom(t, r, l, m, last+1, last+100, 1)
	checkLog(t, l, m, 1, last+100)
}

// appendSmall appends entries of up to 100 bytes one at a time.
func appendSmall(t *testing.T, r *rand.Rand, l *Log, m model, from, upto uint64) {
	t.Helper()
	for i := from; i <= upto; i++ {
		e := &raft.Log{Index: i, Term: 2, Data: make([]byte, r.IntN(100))}
		for k := range e.Data {
			e.Data[k] = byte(r.Uint32())
		}
		if len(e.Data) == 0 {
			e.Data = nil
		}
		m[i] = e
		if err := l.StoreLogs([]*raft.Log{e}); err != nil {
			t.Fatalf("StoreLogs at %d: %v", i, err)
		}
	}
}
