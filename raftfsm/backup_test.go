package raftfsm

import (
	"bytes"
	"strconv"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
)

// Capture's index is the index of the state it copied, even while
// batches are applied concurrently: entry i sets the score of one member
// to i, so a copy at index i holds score i.
func TestCaptureIndexMatchesState(t *testing.T) {
	f := New()
	const n = 50000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(1); i <= n; i++ {
			e := &Entry{Op: OpCommand, Proto: 2, Time: 1, Commands: []Command{{Argv: [][]byte{[]byte("zadd"), []byte("k"), []byte(strconv.FormatUint(i, 10)), []byte("m")}}}}
			f.ApplyBatch([]*raft.Log{{Index: i, Type: raft.LogCommand, Data: e.Encode(nil)}})
		}
	}()
	checked := 0
	for f.Applied() < n {
		st := f.Capture()
		score := 0.0
		if e := viewKey(st, "k"); e != nil {
			e.Z.Each(func(m []byte, s float64) bool {
				if string(m) == "m" {
					score = s
				}
				return true
			})
		}
		if uint64(score) != st.Index {
			t.Fatalf("capture at index %d holds score %v", st.Index, score)
		}
		checked++
	}
	wg.Wait()
	t.Logf("%d captures checked", checked)
}

// A captured state is the caller's: later applies do not change it, and
// it writes the snapshot format, which restores to the same index.
func TestCaptureIsACopy(t *testing.T) {
	f := New()
	f.ApplyBatch([]*raft.Log{{Index: 5, Type: raft.LogCommand, Data: zadd("k", "a")}})
	st := f.Capture()
	f.ApplyBatch([]*raft.Log{{Index: 6, Type: raft.LogCommand, Data: zadd("k", "b")}})
	if got := viewKey(st, "k").Z.Len(); got != 1 {
		t.Fatalf("the copy changed: %d members", got)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, st); err != nil {
		t.Fatal(err)
	}
	if buf.Bytes()[7] != SnapshotVersion {
		t.Fatalf("snapshot version byte %d, SnapshotVersion %d", buf.Bytes()[7], SnapshotVersion)
	}
	g := New()
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if g.Applied() != 5 || g.Capture().Index != 5 {
		t.Fatalf("restored index %d", g.Applied())
	}
}

// viewKey returns key's entry in database 0 of a captured state, or nil.
func viewKey(st *State, key string) *keyspace.ViewEntry {
	var found *keyspace.ViewEntry
	st.View().Each(0, func(e *keyspace.ViewEntry) {
		if e.Key == key {
			found = e
		}
	})
	return found
}
