package node

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/logarg"
)

// raftLogger is the logger Raft is given: the node's, with the warnings
// Raft gives on a node's normal course logged as information, so that a
// clean start logs no warning. Raft's other messages pass unchanged.
type raftLogger struct {
	hclog.Logger
	// single: the node runs alone (msgSingleElection is then normal).
	single bool
}

// Warnings Raft gives on a normal start.
const (
	// On a single node's every start: it elects itself once it has
	// waited its heartbeat timeout for a leader. On a cluster node, the
	// first election after a start, before any leader was heard of; an
	// election after a leader was lost stays a warning.
	msgSingleElection = "heartbeat timeout reached, starting election"
	// On a cluster node that waits to be bootstrapped or joined.
	msgNoPeers = "no known peers, aborting election"
	// On a node that waits to be added as a voter, or was removed as it
	// left the cluster.
	msgNotVoter = "heartbeat timeout reached, not part of a stable configuration or a non-voter, not triggering a leader election"
	// A leader walking back to the last entry a follower holds, and the
	// follower that lacks the entry before the ones sent: every new or
	// restarted follower is brought up to date that way.
	msgSendingOlder = "appendEntries rejected, sending older logs"
	msgNoPrevious   = "failed to get previous log"
)

func (l raftLogger) Warn(msg string, args ...interface{}) {
	if l.normal(msg, args) {
		l.Logger.Info(msg, args...)
		return
	}
	l.Logger.Warn(msg, args...)
}

// normal reports whether Raft's warning msg is part of a node's normal
// course.
func (l raftLogger) normal(msg string, args []interface{}) bool {
	switch msg {
	case msgNoPeers, msgNotVoter, msgSendingOlder:
		return true
	case msgSingleElection:
		return l.single || fmt.Sprint(logarg.Value(args, "last-leader-id")) == ""
	case msgNoPrevious:
		err, _ := logarg.Value(args, "error").(error)
		return errors.Is(err, raft.ErrLogNotFound)
	}
	return false
}
