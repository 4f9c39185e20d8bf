package raftfsm

import (
	"encoding/binary"
	"errors"
)

// A proposal header lets the node that proposed an entry learn what became
// of it when leadership changes while the entry is in flight. An entry
// with the header is
//
//	[VersionProposal u8][op u8][term u64][proposal u64][payload as version 1]
//
// (big endian, fixed width, so a proposer can set the term of an encoded
// entry in place with SetProposal). Term fences the entry: it takes effect
// only if it is committed in log term Term, and every node, applying the
// same log, answers it with ErrOtherTerm otherwise. So an entry a leader
// appended in term T either is committed before the first entry of any
// later term, or never takes effect: a node that has applied an entry of
// a term after T (AppliedTerm) without seeing it knows it was not applied.
// Proposal names the entry for its proposer: the FSM reports the result
// of every entry with a header to OnProposal, on every node, and the
// proposer looks for its own.
const VersionProposal = 2

// proposalHeader is the size of the header's term and proposal fields.
const proposalHeader = 16

// ErrOtherTerm is the result of an entry committed in another log term
// than the one its header names: nothing of it was applied.
var ErrOtherTerm = errors.New("entry committed in another term than it was proposed for: not applied")

// SetProposal sets the term and proposal of an entry encoded with a
// proposal header, in place, and reports whether data has one.
func SetProposal(data []byte, term, proposal uint64) bool {
	if len(data) < 2+proposalHeader || data[0] != VersionProposal {
		return false
	}
	binary.BigEndian.PutUint64(data[2:], term)
	binary.BigEndian.PutUint64(data[10:], proposal)
	return true
}

// applyFenced applies e, the entry of log l, unless its header names
// another term than l's.
func (f *FSM) applyFenced(index, term uint64, e *Entry) Result {
	if e.Term != 0 && e.Term != term {
		return Result{Index: index, Err: ErrOtherTerm}
	}
	if e.Op == OpChunk {
		return f.applyChunk(index, term, e.Chunk, e.Time)
	}
	if r := f.applier.Apply(index, e); r != nil {
		return Result{Index: index, Reply: r}
	}
	return Result{Index: index}
}

// AppliedTerm returns the highest log term among the entries applied so
// far (0 before any): every entry of an earlier term that was ever going
// to be committed has been applied.
func (f *FSM) AppliedTerm() uint64 { return f.appliedTerm.Load() }

// Restores counts the snapshots restored since the FSM started: entries a
// snapshot covers are never reported to OnProposal.
func (f *FSM) Restores() uint64 { return f.restores.Load() }

// TermChanged returns a channel closed when AppliedTerm next grows or a
// snapshot is restored.
func (f *FSM) TermChanged() <-chan struct{} {
	for {
		if p := f.termCh.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		f.termCh.CompareAndSwap(nil, &ch)
	}
}

// advanceTerm records that an entry of term was applied.
func (f *FSM) advanceTerm(term uint64) {
	if term <= f.appliedTerm.Load() {
		return
	}
	f.appliedTerm.Store(term)
	f.wakeTerm()
}

// restored records a snapshot restore.
func (f *FSM) restored() {
	f.restores.Add(1)
	f.wakeTerm()
}

func (f *FSM) wakeTerm() {
	ch := make(chan struct{})
	if old := f.termCh.Swap(&ch); old != nil {
		close(*old)
	}
}
