package raftfsm

import "testing"

func TestCommandCount(t *testing.T) {
	for _, e := range sampleEntries() {
		want := 0
		switch e.Op {
		case OpCommand, OpBatch, OpMulti:
			want = len(e.Commands)
		}
		for _, term := range []uint64{0, 7} {
			e.Term, e.Proposal = term, term
			if got := CommandCount(e.Encode(nil)); got != want {
				t.Errorf("%v (term %d): %d commands, want %d", e.Op, term, got, want)
			}
		}
	}
	if n := CommandCount([]byte{99, 1}); n != 0 {
		t.Errorf("garbage: %d commands", n)
	}
}
