package raftfsm

import "testing"

func TestBatchEntryRoundTrip(t *testing.T) {
	e := &Entry{Op: OpBatch, Proto: 3, Time: 42, Commands: []Command{
		{DB: 0, Argv: [][]byte{[]byte("ZADD"), []byte("k"), []byte("1"), []byte("a")}},
		{DB: 3, Argv: [][]byte{[]byte("ZREM"), []byte("k"), []byte("a")}},
	}}
	d, err := Decode(e.Encode(nil))
	if err != nil || d.Op != OpBatch || len(d.Commands) != 2 || d.Commands[1].DB != 3 || d.Proto != 3 {
		t.Fatalf("round trip: %+v, %v", d, err)
	}
	empty := &Entry{Op: OpBatch, Proto: 2}
	if _, err := Decode(empty.Encode(nil)); err == nil {
		t.Fatal("an empty batch decoded")
	}
}

func TestSnapshotReleaseHook(t *testing.T) {
	f := New()
	released := 0
	f.OnSnapshotReleased = func() { released++ }
	s, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s.Release()
	if released != 1 {
		t.Fatalf("OnSnapshotReleased called %d times, want 1", released)
	}
}
