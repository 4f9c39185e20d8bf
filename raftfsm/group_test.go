package raftfsm

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// A group applies each of its entries as a log entry of its own at the
// group's index and term: the same state and replies as the entries one
// by one, each fenced to its own term, each reported to OnProposal, an
// entry that does not decode failed alone.
func TestGroupAppliesEachEntryAsItsOwn(t *testing.T) {
	zadd := func(term, id uint64, member string) []byte {
		e := commandEntry(1, NewCommand(0, "ZADD", "k", "1", member))
		e.Term, e.Proposal = term, id
		return e.Encode(nil)
	}
	batch := &Entry{Op: OpBatch, Time: 1, Proto: 2, Term: 2, Proposal: 13, Commands: []Command{
		NewCommand(0, "ZINCRBY", "k", "5", "a"), NewCommand(1, "ZADD", "j", "2", "x")}}
	subs := [][]byte{
		zadd(2, 10, "a"),
		zadd(1, 11, "b"), // fenced to another term
		{VersionProposal, 0xff, 1, 2},
		batch.Encode(nil),
		zadd(0, 0, "c"),
		AppendGroup(nil, [][]byte{zadd(2, 14, "d")}), // no group inside a group
	}
	g := New()
	var reports []uint64
	g.OnProposal = func(id uint64, res Result) { reports = append(reports, id) }
	group := AppendGroup(nil, subs)
	var heard []GroupResult
	g.OnGroup = func(data []byte, index uint64, res GroupResult) {
		if &data[0] != &group[0] || index != 5 {
			t.Errorf("OnGroup heard index %d of other bytes", index)
		}
		heard = append(heard, res)
	}
	if len(group) != GroupLen(subs) {
		t.Fatalf("GroupLen %d, AppendGroup wrote %d", GroupLen(subs), len(group))
	}
	out := g.ApplyBatch([]*raft.Log{{Index: 5, Term: 2, Type: raft.LogCommand, Data: group}})
	rs, ok := out[0].(GroupResult)
	if !ok || len(rs) != len(subs) {
		t.Fatalf("group result %+v", out[0])
	}
	for i, r := range rs {
		if r.Index != 5 {
			t.Errorf("entry %d: index %d, want the group's 5", i, r.Index)
		}
	}
	if string(rs[0].Reply) != ":1\r\n" || rs[0].Err != nil {
		t.Errorf("entry of its own term: %+v", rs[0])
	}
	if !errors.Is(rs[1].Err, ErrOtherTerm) {
		t.Errorf("entry of another term: %+v", rs[1])
	}
	if !errors.Is(rs[2].Err, ErrEntryFailed) || !errors.Is(rs[5].Err, ErrEntryFailed) {
		t.Errorf("undecodable entries: %+v, %+v", rs[2], rs[5])
	}
	if string(rs[3].Reply) != "$1\r\n6\r\n:1\r\n" {
		t.Errorf("batch reply %q", rs[3].Reply)
	}
	if len(heard) != 1 || len(heard[0]) != len(subs) || string(heard[0][0].Reply) != ":1\r\n" {
		t.Errorf("OnGroup heard %+v, want the group's results once", heard)
	}
	if g.Failed() != 2 {
		t.Errorf("Failed %d, want 2", g.Failed())
	}
	if len(reports) != 3 || reports[0] != 10 || reports[1] != 11 || reports[2] != 13 {
		t.Errorf("OnProposal heard %v, want [10 11 13]", reports)
	}
	if g.Applied() != 5 || g.AppliedTerm() != 2 {
		t.Errorf("applied %d term %d", g.Applied(), g.AppliedTerm())
	}

	// The same entries as logs of their own reach the same state (but the
	// group inside, which is a group of its own there).
	one := New()
	for i, s := range subs[:5] {
		one.ApplyBatch([]*raft.Log{{Index: uint64(i + 1), Term: 2, Type: raft.LogCommand, Data: s}})
	}
	if a, b := dump(g.KS()), dump(one.KS()); a != b {
		t.Fatalf("group and single entries differ:\n%s\n---\n%s", a, b)
	}

	if got := CommandCount(group); got != 6 {
		t.Errorf("CommandCount %d, want 6 (1+1+0+2+1+0)", got)
	}
	if got := EntryCount(group); got != len(subs) {
		t.Errorf("EntryCount %d, want %d", got, len(subs))
	}
	if got := EntryCount(subs[0]); got != 1 {
		t.Errorf("EntryCount of an entry %d", got)
	}
}

// A group whose framing is broken is failed as a whole: nothing of it is
// applied, on every node alike.
func TestGroupBrokenFramingFails(t *testing.T) {
	entry := commandEntry(1, NewCommand(0, "ZADD", "k", "1", "a")).Encode(nil)
	whole := AppendGroup(nil, [][]byte{entry, entry})
	for name, data := range map[string][]byte{
		"empty":     {VersionGroup, 0},
		"truncated": whole[:len(whole)-1],
		"trailing":  append(append([]byte{}, whole...), 0),
		"count":     {VersionGroup, 5, 1, 0},
		"length":    {VersionGroup, 1, 0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		f := New()
		before := dump(f.KS())
		out := f.ApplyBatch([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: data}})
		r, ok := out[0].(Result)
		if !ok || !errors.Is(r.Err, ErrEntryFailed) || r.Reply != nil {
			t.Errorf("%s: result %+v, want a failed entry", name, out[0])
		}
		if dump(f.KS()) != before || f.Failed() != 1 {
			t.Errorf("%s: state changed or Failed %d", name, f.Failed())
		}
		if CommandCount(data) != 0 || EntryCount(data) != 0 {
			t.Errorf("%s: counted %d commands, %d entries", name, CommandCount(data), EntryCount(data))
		}
	}
}
