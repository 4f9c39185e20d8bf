package raftfsm

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// bigMulti is a transaction of n ZADDs, encoded with a proposal header.
func bigMulti(n int) []byte {
	e := &Entry{Op: OpMulti, Time: 1, Proto: 2, Term: 9, Proposal: 77}
	for i := 0; i < n; i++ {
		e.Commands = append(e.Commands, NewCommand(0, "zadd", "k", fmt.Sprint(i), fmt.Sprintf("member-%06d", i)))
	}
	return e.Encode(nil)
}

// chunkLogs encodes the pieces as log entries from index on, in term,
// each with a proposal header of that term.
func chunkLogs(pieces []*Entry, index, term uint64) []*raft.Log {
	var logs []*raft.Log
	for i, p := range pieces {
		p.Term, p.Proposal = term, uint64(1000+i)
		logs = append(logs, &raft.Log{Index: index + uint64(i), Term: term, Type: raft.LogCommand, Data: p.Encode(nil)})
	}
	return logs
}

// The pieces of a split entry, applied in order among other entries,
// change nothing until the last, which applies the whole entry as one log
// entry would and answers its replies.
func TestChunksApplyTheWholeEntryWithTheLast(t *testing.T) {
	data := bigMulti(2000)
	whole := New()
	want := whole.ApplyBatch([]*raft.Log{{Index: 10, Term: 9, Type: raft.LogCommand, Data: data}})[0].(Result)

	if want.Err != nil || len(want.Reply) == 0 {
		t.Fatalf("the whole entry: %v, %d bytes of replies", want.Err, len(want.Reply))
	}
	f := New()
	pieces := SplitEntry(data, 42, 10000)
	if len(pieces) < 3 {
		t.Fatalf("%d pieces of %d bytes", len(pieces), len(data))
	}
	// Another client's write between the pieces.
	other := commandEntry(1, NewCommand(0, "zadd", "other", "1", "x")).Encode(nil)
	mid := len(pieces) / 2
	var last Result
	for i, l := range chunkLogs(pieces, 1, 3) {
		if i == mid {
			f.ApplyBatch([]*raft.Log{{Index: 600 + 2*uint64(i) - 1, Term: 3, Type: raft.LogCommand, Data: other}})
		}
		l.Index = 600 + 2*uint64(i)
		r := f.ApplyBatch([]*raft.Log{l})[0].(Result)
		if r.Err != nil {
			t.Fatalf("piece %d: %v", i, r.Err)
		}
		if i < len(pieces)-1 {
			if r.Reply != nil {
				t.Fatalf("piece %d answered %q", i, r.Reply)
			}
			if f.KS().DB(0).Peek([]byte("k")) != nil {
				t.Fatalf("piece %d applied part of the entry", i)
			}
		}
		last = r
	}
	if string(last.Reply) != string(want.Reply) {
		t.Fatalf("the last piece answered %d bytes, the whole entry %d", len(last.Reply), len(want.Reply))
	}
	whole.ApplyBatch([]*raft.Log{{Index: 11, Term: 3, Type: raft.LogCommand, Data: other}})
	if got, want := dump(f.KS()), dump(whole.KS()); got != want {
		t.Fatalf("state after the pieces differs from the whole entry's:\n%s\nwant\n%s", got, want)
	}
	if len(f.chunks) != 0 {
		t.Fatalf("%d entries' pieces still kept", len(f.chunks))
	}
}

// A missing piece, a piece of another term, or a later term's entry:
// nothing of the split entry is applied, and its later pieces answer
// ErrChunkBroken (or ErrOtherTerm, fenced).
func TestBrokenChunksApplyNothing(t *testing.T) {
	data := bigMulti(500)
	pieces := SplitEntry(data, 7, 3000)
	if len(pieces) < 3 {
		t.Fatalf("%d pieces", len(pieces))
	}
	apply := func(f *FSM, l *raft.Log) Result { r, _ := f.ApplyBatch([]*raft.Log{l})[0].(Result); return r }
	check := func(f *FSM, what string) {
		t.Helper()
		if f.KS().DB(0).Peek([]byte("k")) != nil {
			t.Fatalf("%s: part of the entry was applied", what)
		}
		if len(f.chunks) != 0 {
			t.Fatalf("%s: pieces still kept", what)
		}
	}

	// A piece missing.
	f := New()
	logs := chunkLogs(pieces, 1, 2)
	apply(f, logs[0])
	for i, l := range logs[2:] {
		if r := apply(f, l); !errors.Is(r.Err, ErrChunkBroken) {
			t.Fatalf("piece %d after a missing one: %v", i+2, r.Err)
		}
	}
	check(f, "a piece missing")

	// A later term's entry before the last piece: the kept pieces are
	// dropped, the rest is fenced out.
	f = New()
	apply(f, logs[0])
	apply(f, logs[1])
	apply(f, &raft.Log{Index: 3, Term: 3, Type: raft.LogNoop})
	if len(f.chunks) != 0 {
		t.Fatal("pieces of term 2 kept after an entry of term 3")
	}
	for i, l := range chunkLogs(pieces, 4, 2)[2:] {
		l.Term = 3 // committed in term 3, fenced to 2
		if r := apply(f, l); !errors.Is(r.Err, ErrOtherTerm) {
			t.Fatalf("piece %d in a later term: %v", i+2, r.Err)
		}
	}
	check(f, "a later term")

	// The whole sequence proposed again in the new term applies.
	var last Result
	for _, l := range chunkLogs(pieces, 100, 3) {
		last = apply(f, l)
	}
	if last.Err != nil || f.KS().DB(0).Peek([]byte("k")) == nil {
		t.Fatalf("the pieces proposed again: %v", last.Err)
	}

	// Pieces whose last never comes are dropped after chunkMaxAge entries.
	f = New()
	apply(f, logs[0])
	apply(f, &raft.Log{Index: 2 + chunkMaxAge, Term: 2, Type: raft.LogNoop})
	check(f, "after chunkMaxAge entries")
}

// A snapshot is refused while pieces are kept, and taken once the entry
// is whole; a restore forgets the kept pieces.
func TestSnapshotWaitsForChunks(t *testing.T) {
	pieces := SplitEntry(bigMulti(300), 5, 2000)
	logs := chunkLogs(pieces, 1, 1)
	f := New()
	f.ApplyBatch(logs[:1])
	if _, err := f.Snapshot(); !errors.Is(err, ErrChunksPending) {
		t.Fatalf("snapshot with pieces kept: %v", err)
	}
	f.ApplyBatch(logs[1:])
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatalf("snapshot once the entry is whole: %v", err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	g := New()
	g.ApplyBatch(chunkLogs(SplitEntry(bigMulti(300), 6, 2000), 1, 1)[:1])
	if err := g.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	if len(g.chunks) != 0 {
		t.Fatal("pieces kept across a restore")
	}
	if got, want := dump(g.KS()), dump(f.KS()); got != want {
		t.Fatal("restored state differs")
	}
}

// A split entry that is not a client's data entry, or does not decode,
// is recorded as failed when whole.
func TestChunkedEntryIsValidated(t *testing.T) {
	rules := (&Entry{Op: OpRules, Rules: []Rule{{Pattern: "*", Layout: 1}}}).Encode(nil)
	for name, data := range map[string][]byte{"rules": rules, "garbage": []byte{Version, byte(OpCommand), 9, 9, 9}} {
		f := New()
		var last Result
		for _, l := range chunkLogs(SplitEntry(data, 1, 2), 1, 1) {
			last = f.ApplyBatch([]*raft.Log{l})[0].(Result)
		}
		if !errors.Is(last.Err, ErrEntryFailed) || f.Failed() != 1 {
			t.Fatalf("%s split: %v, %d failed", name, last.Err, f.Failed())
		}
	}
}
