package raftfsm

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// Every kind of entry round-trips with a proposal header, and SetProposal
// rewrites the header of an encoded entry in place.
func TestProposalHeaderRoundTrip(t *testing.T) {
	for _, e := range sampleEntries() {
		e.Term, e.Proposal = 7, 1<<63|42
		data := e.Encode(nil)
		if data[0] != VersionProposal {
			t.Fatalf("%v: version %d, want %d", e.Op, data[0], VersionProposal)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatalf("%v: decode: %v", e.Op, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(e)) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", e.Op, got, e)
		}
		if !SetProposal(data, 9, 3) {
			t.Fatalf("%v: SetProposal found no header", e.Op)
		}
		got, err = Decode(data)
		if err != nil || got.Term != 9 || got.Proposal != 3 {
			t.Fatalf("%v: after SetProposal: term %d proposal %d, %v", e.Op, got.Term, got.Proposal, err)
		}
	}
	plain := (&Entry{Op: OpNoop}).Encode(nil)
	if SetProposal(plain, 1, 1) {
		t.Fatal("SetProposal changed an entry without a header")
	}
	// A header of zeros is not what Encode writes: refused, as is a short one.
	for _, bad := range [][]byte{
		append([]byte{VersionProposal, byte(OpNoop)}, make([]byte, 16)...),
		{VersionProposal, byte(OpNoop), 0, 0, 0, 1},
	} {
		if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode %x: %v, want ErrCorrupt", bad, err)
		}
	}
}

// An entry takes effect only in the term its header names: committed in
// another it changes nothing and answers ErrOtherTerm, on every node
// alike. OnProposal hears of both, AppliedTerm follows the log, and
// TermChanged wakes when it grows.
func TestProposalTermFence(t *testing.T) {
	f := New()
	type report struct {
		id  uint64
		res Result
	}
	var reports []report
	f.OnProposal = func(id uint64, res Result) { reports = append(reports, report{id, res}) }
	zadd := func(term, id uint64, member string) []byte {
		e := commandEntry(1, NewCommand(0, "ZADD", "k", "1", member))
		e.Term, e.Proposal = term, id
		return e.Encode(nil)
	}
	changed := f.TermChanged()
	out := f.ApplyBatch([]*raft.Log{
		{Index: 1, Term: 2, Type: raft.LogCommand, Data: zadd(2, 10, "a")},
		{Index: 2, Term: 2, Type: raft.LogCommand, Data: zadd(1, 11, "b")},
		{Index: 3, Term: 3, Type: raft.LogCommand, Data: zadd(0, 12, "c")},
	})
	if r := out[0].(Result); r.Err != nil || string(r.Reply) != ":1\r\n" {
		t.Fatalf("entry of its own term: %+v", r)
	}
	if r := out[1].(Result); !errors.Is(r.Err, ErrOtherTerm) || r.Reply != nil {
		t.Fatalf("entry of another term: %+v", r)
	}
	if r := out[2].(Result); r.Err != nil {
		t.Fatalf("entry with no term in its header: %+v", r)
	}
	if got := dump(f.KS()); !bytes.Contains([]byte(got), []byte(`"a"=1 "c"=1`)) || bytes.Contains([]byte(got), []byte(`"b"`)) {
		t.Fatalf("state %s", got)
	}
	if len(reports) != 3 || reports[0].id != 10 || reports[1].id != 11 || !errors.Is(reports[1].res.Err, ErrOtherTerm) || reports[2].id != 12 {
		t.Fatalf("reports %+v", reports)
	}
	if f.AppliedTerm() != 3 {
		t.Fatalf("applied term %d, want 3", f.AppliedTerm())
	}
	select {
	case <-changed:
	default:
		t.Fatal("TermChanged was not closed when the applied term grew")
	}
	again := f.TermChanged()
	f.ApplyBatch([]*raft.Log{{Index: 4, Term: 3, Type: raft.LogCommand, Data: (&Entry{Op: OpNoop}).Encode(nil)}})
	select {
	case <-again:
		t.Fatal("TermChanged closed without a new term")
	default:
	}
}
