package raftfsm

import (
	"encoding/binary"
	"fmt"

	"github.com/hashicorp/raft"
)

// A group is several entries in one log entry:
//
//	[VersionGroup u8][count uvarint]{[length uvarint][entry]}*count
//
// where each entry is a whole encoded entry of version 1 or 2 (never
// another group). The leader's group commit hands the entries proposed
// while a batch was in flight to Raft as one group: Raft's cost per log
// entry (its future, the append, the commitment, the encoding of every
// AppendEntries for every follower, the decoding on each follower) is paid
// once for all of them. The entries are applied in order, each exactly as
// it would be as a log entry of its own at the group's index and term: its
// own term fence, its own result reported to OnProposal, an entry that
// does not decode recorded as failed on its own. A group whose framing is
// broken is failed as a whole, on every node alike.
const VersionGroup = 3

// GroupResult is the result of a group: one Result per entry, in order.
type GroupResult []Result

// AppendGroup appends the group of the encoded entries to dst.
func AppendGroup(dst []byte, entries [][]byte) []byte {
	dst = append(dst, VersionGroup)
	dst = binary.AppendUvarint(dst, uint64(len(entries)))
	for _, e := range entries {
		dst = binary.AppendUvarint(dst, uint64(len(e)))
		dst = append(dst, e...)
	}
	return dst
}

// GroupLen returns the size AppendGroup adds for the entries.
func GroupLen(entries [][]byte) int {
	n := 1 + uvarintLen(uint64(len(entries)))
	for _, e := range entries {
		n += uvarintLen(uint64(len(e))) + len(e)
	}
	return n
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// isGroup reports whether data is a group.
func isGroup(data []byte) bool { return len(data) > 0 && data[0] == VersionGroup }

// splitGroup returns the entries of a group, aliasing data, or an error
// if its framing is broken (nothing of it is then applied).
func splitGroup(data []byte, into [][]byte) ([][]byte, error) {
	d := &decoder{b: data}
	if d.byte() != VersionGroup {
		return nil, fmt.Errorf("%w: not a group", ErrCorrupt)
	}
	n := d.count(1)
	if n == 0 {
		d.fail()
	}
	into = into[:0]
	for ; n > 0 && d.err == nil; n-- {
		into = append(into, d.bytes())
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: group framing", d.err)
	}
	return into, nil
}

// applyGroup applies the entries of the group log l, each as ApplyBatch
// applies a log of its own, and returns their results.
func (f *FSM) applyGroup(l *raft.Log) interface{} {
	subs, err := splitGroup(l.Data, f.groupScratch)
	if err != nil {
		return f.fail(l, err)
	}
	f.groupScratch = subs[:0]
	out := make(GroupResult, len(subs))
	for i, data := range subs {
		e := &f.scratch
		var res Result
		if err := DecodeInto(e, data); err != nil {
			res = f.fail(&raft.Log{Index: l.Index, Term: l.Term, Data: data}, err)
		} else {
			res = f.applyFenced(l.Index, l.Term, e)
			if e.Proposal != 0 && f.OnProposal != nil {
				f.OnProposal(e.Proposal, res)
			}
		}
		out[i] = res
	}
	clear(subs)
	if f.OnGroup != nil {
		f.OnGroup(l.Data, l.Index, out)
	}
	return out
}

// Counts returns how many entries and client commands the encoded log
// data holds, reading a group's framing once: for a group, its entries
// and the sum of their CommandCount (none for broken framing); for
// anything else, one entry and its CommandCount. It is for metrics.
func Counts(data []byte) (entries, commands int) {
	if !isGroup(data) {
		return 1, CommandCount(data)
	}
	var buf [16][]byte
	subs, err := splitGroup(data, buf[:0])
	if err != nil {
		return 0, 0
	}
	for _, s := range subs {
		commands += CommandCount(s)
	}
	return len(subs), commands
}

// EntryCount returns how many entries the encoded log data holds: the
// count of a group, 1 for anything else.
func EntryCount(data []byte) int {
	n, _ := Counts(data)
	return n
}
