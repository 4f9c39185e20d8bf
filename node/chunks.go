package node

import (
	"errors"
	"fmt"

	"github.com/goblindb/goblin/raftfsm"
)

// Writes too large for one log entry in a cluster.
//
// A cluster keeps each log entry within MaxClusterEntryBytes (write.go
// tells why). A data entry larger than that (one command with large
// arguments, a long transaction) is split into pieces that each fit, and
// the pieces are proposed in order, a few at a time, as entries of their own
// (raftfsm/chunk.go): the state machine applies the whole entry when its
// last piece is applied, so the write takes effect whole or not at all,
// at the last piece's index. Such a write may be up to MaxSplitBytes.
//
// The outcome is the last piece's: applied with its result, or not (a
// piece was lost: every later piece answers ErrChunkBroken), or uncertain.
// When it was not applied, the error is the first an earlier piece met
// (OOM, MISCONF, no leader...), which is why the rest broke.
//
// Pieces are written only once every server of the configuration applies
// them (gossiped Member.Entries, as with groups: groupgate.go); until
// then, during a rolling upgrade, such a write is refused as before.

// proposeSplit proposes data, the encoded data entry of a write too
// large for one log entry of this cluster, in pieces stamped with the
// clock now, and returns the function that waits for its outcome; nil
// when some server does not apply pieces (the write is then refused as
// too large for one entry). It returns once the last piece is proposed,
// or once an earlier piece failed. The whole entry's own proposal header
// is ignored where it is applied: each piece carries its own.
func (n *Node) proposeSplit(data []byte, now int64, here bool) func() (raftfsm.Result, error) {
	if !n.serversApply(raftfsm.ChunkMinVersion) {
		return nil
	}
	if limit := min(maxSplitBytes, maxEntryBytes); len(data) > limit {
		err := fmt.Errorf("%w (%d bytes, at most %d)", ErrEntryTooLarge, len(data), limit)
		return (&Pending{err: err}).Wait
	}
	pieces := raftfsm.SplitEntry(data, n.props.newID(), maxClusterEntryBytes-raftfsm.ChunkOverhead-64)
	// At most splitWindow pieces in flight: all of them at once would
	// make AppendEntries requests and log appends of the whole write.
	// The last is proposed before this returns, so the caller's next
	// entries follow the whole write.
	waits := make([]func() (raftfsm.Result, error), 0, len(pieces))
	var first error // the first definite error of an earlier piece
	done := 0
	for i, pc := range pieces {
		if i >= splitWindow {
			if _, err := waits[done](); err != nil && !errors.Is(err, ErrUncertain) {
				first = err
			}
			done++
			if first != nil {
				break // the entry cannot be whole: send no more
			}
		}
		pc.Time = now
		waits = append(waits, n.propose(pc, here).Wait)
	}
	rest := waits[done:]
	complete := len(waits) == len(pieces)
	return func() (raftfsm.Result, error) {
		for _, w := range rest[:len(rest)-1] {
			if _, err := w(); err != nil && first == nil && !errors.Is(err, ErrUncertain) {
				first = err
			}
		}
		res, err := rest[len(rest)-1]()
		if !complete {
			// The last piece was never sent: nothing was applied.
			return raftfsm.Result{}, first
		}
		if errors.Is(err, ErrNotApplied) && first != nil {
			err = first
		}
		return res, err
	}
}

// MaxSplitBytes is the largest write a cluster takes in pieces. The
// whole write is applied at once on every node, and the nodes' heartbeats
// must still arrive within the heartbeat timeout meanwhile: measured on a
// 3-node cluster on one 2-vCPU VM with the default 300 ms timeout, writes
// of 32 MiB (one member, or a transaction of 1 MiB members) went by with
// every heartbeat on time, of 64 MiB with heartbeats up to 494 ms late,
// of 100 MiB with elections. Half the size measured clean.
const MaxSplitBytes = 16 << 20

// maxSplitBytes is the limit proposeSplit applies (tests lower it).
var maxSplitBytes = MaxSplitBytes

// splitWindow is how many pieces of a split write are in flight at once.
const splitWindow = 4
