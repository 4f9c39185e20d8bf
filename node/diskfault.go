package node

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// LogWriteError is a failed write to the Raft log (a full disk, an I/O
// error). It is ErrLogWrite; Reason says why, as strerror would.
type LogWriteError struct {
	Err error
}

func (e *LogWriteError) Error() string        { return ErrLogWrite.Error() + ": " + e.Err.Error() }
func (e *LogWriteError) Unwrap() error        { return e.Err }
func (e *LogWriteError) Is(target error) bool { return target == ErrLogWrite }

// Reason is the cause as the C library's strerror words it ("No space
// left on device"), or the error text when it carries no errno.
func (e *LogWriteError) Reason() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return e.Err.Error()
}

// LogFault returns the error of the Raft log's last append, or nil once
// one succeeds. While it is set, this node refuses writes with it (a
// *LogWriteError).
func (n *Node) LogFault() error {
	if f := n.stores.guard.current(); f != nil {
		return f.err
	}
	return nil
}

// writeRefused returns the error a write gets when this node's log fails:
// the write could not reach its log (on the leader), or be applied here
// (on a follower), so it is refused before it is proposed.
func (n *Node) writeRefused() error {
	if f := n.stores.guard.current(); f != nil {
		return f.err
	}
	return nil
}

// holdFailedAppend is the logGuard's hold: a failed append is held and
// retried while this node leads and no other node can take over.
func (n *Node) holdFailedAppend() bool {
	r := n.raftRef.Load()
	return r != nil && r.State() == raft.Leader && !n.canHandOff(r)
}

// handOffFresh is how recently another voter must have reported a
// healthy log (cluster progress reports come every half second).
const handOffFresh = 3 * time.Second

// canHandOff reports whether another voter could lead in this node's
// place: gossip sees it alive and it reported a working log store
// recently.
func (n *Node) canHandOff(r *raft.Raft) bool {
	if n.peers == nil {
		return false
	}
	others, _, err := otherVoters(r, n.cfg.ID)
	if err != nil {
		return false
	}
	for _, m := range n.peers.Members() {
		if slices.Contains(others, m.ID) && m.State == "alive" && !m.LogFault && !m.Reported.IsZero() && time.Since(m.Reported) < handOffFresh {
			return true
		}
	}
	return false
}

// persistenceStatus fills in the log and snapshot health for INFO.
func (n *Node) persistenceStatus(st *Status) {
	if f := n.stores.guard.current(); f != nil {
		st.LogWriteErr, st.LogWriteErrSince = f.err, f.since
	}
	st.LastSnapshot, st.SnapshotErrSince, st.SnapshotErr = n.snaps.status()
}
