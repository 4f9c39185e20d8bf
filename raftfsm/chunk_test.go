package raftfsm

import (
	"bytes"
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

	// Pieces whose last never comes are dropped after chunkMaxAge entries,
	// or once the state's clock passed chunkMaxMillis since the first.
	f = New()
	apply(f, logs[0])
	apply(f, &raft.Log{Index: 2 + chunkMaxAge, Term: 2, Type: raft.LogNoop})
	check(f, "after chunkMaxAge entries")
	f = New()
	apply(f, logs[0])
	late := commandEntry(chunkMaxMillis+1, NewCommand(0, "zadd", "other", "1", "x")).Encode(nil)
	apply(f, &raft.Log{Index: 2, Term: 2, Type: raft.LogCommand, Data: late})
	apply(f, &raft.Log{Index: 3, Term: 2, Type: raft.LogNoop})
	check(f, "after chunkMaxMillis")

	// More than chunkMaxBytes kept in all breaks the entry.
	old := chunkMaxBytes
	chunkMaxBytes = 2 * 3000
	defer func() { chunkMaxBytes = old }()
	f = New()
	var res []Result
	for _, l := range logs {
		res = append(res, apply(f, l))
	}
	if !errors.Is(res[2].Err, ErrChunkBroken) || !errors.Is(res[len(res)-1].Err, ErrChunkBroken) {
		t.Fatalf("a third piece of 3000 bytes past a bound of 6000: %v, last %v", res[2].Err, res[len(res)-1].Err)
	}
	check(f, "past chunkMaxBytes")
	if f.chunkBytes != 0 {
		t.Fatalf("%d bytes counted kept", f.chunkBytes)
	}
}

// A snapshot taken while pieces are kept holds them (format 4): a node
// restoring it applies the whole entry when the rest comes, as the node
// that took it does. Without pieces kept the format stays 3.
func TestSnapshotKeepsChunks(t *testing.T) {
	pieces := SplitEntry(bigMulti(300), 5, 2000)
	logs := chunkLogs(pieces, 1, 1)
	persist := func(f *FSM) *memSink {
		t.Helper()
		snap, err := f.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		sink := &memSink{}
		if err := snap.Persist(sink); err != nil {
			t.Fatal(err)
		}
		return sink
	}
	f := New()
	if got := persist(f).Bytes()[7]; got != 3 {
		t.Fatalf("snapshot format %d with no pieces kept, want 3", got)
	}
	f.ApplyBatch(logs[:2])
	sink := persist(f)
	if got := sink.Bytes()[7]; got != 4 {
		t.Fatalf("snapshot format %d with pieces kept, want 4", got)
	}
	raw := append([]byte(nil), sink.Bytes()...)
	g := New()
	g.ApplyBatch(chunkLogs(SplitEntry(bigMulti(10), 6, 100), 1, 1)[:1]) // pieces of another entry: replaced
	if err := g.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	if len(g.chunks) != 1 || g.chunkBytes != len(f.chunks[5].data) {
		t.Fatalf("restored %d kept entries, %d bytes", len(g.chunks), g.chunkBytes)
	}
	var last Result
	for _, l := range logs[2:] {
		f.ApplyBatch([]*raft.Log{l})
		last = g.ApplyBatch([]*raft.Log{l})[0].(Result)
	}
	if last.Err != nil || len(last.Reply) == 0 {
		t.Fatalf("the last piece after a restore: %v", last.Err)
	}
	if got, want := dump(g.KS()), dump(f.KS()); got != want || g.KS().DB(0).Peek([]byte("k")) == nil {
		t.Fatal("the restored node's state differs from the one that took the snapshot")
	}
	// A damaged section is refused whole (the checksum covers it).
	raw[len(raw)-10] ^= 0xff
	if _, err := ReadSnapshot(bytes.NewReader(raw)); err == nil {
		t.Fatal("a damaged snapshot with pieces was read")
	}
}

// A split entry that is not a client's data entry, or does not decode,
// is recorded as failed when whole.
func TestChunkedEntryIsValidated(t *testing.T) {
	rules := (&Entry{Op: OpRules, Rules: []Rule{{Pattern: "*", Layout: 1}}}).Encode(nil)
	nested := (&Entry{Op: OpChunk, Chunk: &Chunk{Of: 9, Last: true, Piece: bigMulti(1)}}).Encode(nil)
	acl := (&Entry{Op: OpACL, ACL: &ACLChange{}}).Encode(nil)
	for name, data := range map[string][]byte{"rules": rules, "garbage": []byte{Version, byte(OpCommand), 9, 9, 9}, "a chunk": nested, "acl": acl} {
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
