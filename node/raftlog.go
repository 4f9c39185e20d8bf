package node

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/logarg"
)

// raftLogger is the logger Raft is given: the node's, with the warnings
// Raft gives on a node's normal course logged as information, so that a
// clean start logs no warning, and the errors of requests this node's own
// stop cut short at debug level, so that a clean stop logs no error.
// Raft's other messages pass unchanged.
type raftLogger struct {
	hclog.Logger
	// single: the node runs alone (msgSingleElection is then normal).
	single bool
	// stopping is the node's flag (Node.Stopping); nil for none.
	stopping *atomic.Bool
}

// toPeer reports whether Raft's key-value list names a peer or a target:
// a request to another server.
func toPeer(args []interface{}) bool {
	return logarg.Value(args, "peer") != nil || logarg.Value(args, "target") != nil
}

// isStopping reports whether the node is on its way to Close.
func (l raftLogger) isStopping() bool { return l.stopping != nil && l.stopping.Load() }

// Warnings Raft gives on a normal start.
const (
	// On a single node's every start: it elects itself once it has
	// waited its heartbeat timeout for a leader. On a cluster node, the
	// first election after a start, before any leader was heard of; an
	// election after a leader was lost stays a warning.
	msgSingleElection = "heartbeat timeout reached, starting election"
	// On a single node whose own vote took longer to store than its
	// election timeout (20 ms; two fdatasyncs of the stable store, slow
	// on a busy disk): it stands again at once, alone, and wins. On a
	// cluster node, a split or lost vote stays a warning.
	msgElectionRestart = "Election timeout reached, restarting election"
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
	// A candidate whose log is behind this node's refused its vote, as
	// Raft's election rule has it: after nodes restart, the one whose
	// election timer runs out first is often one that missed entries.
	msgVoteTermBehind     = "rejecting vote request since our last term is greater"
	msgVoteIndexBehind    = "rejecting vote request since our last index is greater"
	msgPreVoteTermBehind  = "rejecting pre-vote request since our last term is greater"
	msgPreVoteIndexBehind = "rejecting pre-vote request since our last index is greater"
)

func (l raftLogger) Warn(msg string, args ...interface{}) {
	// Once the node is stopping, its peers going (they stop with it, as
	// a cluster stopped at once) and the elections that follow are too.
	if l.normal(msg, args) || l.isStopping() {
		l.Logger.Info(msg, args...)
		return
	}
	l.Logger.Warn(msg, args...)
}

// Error logs at debug level a request to a peer that failed because this
// node is stopping: its transport closes its connections and cancels its
// dials (the cluster's node-to-node plane), and Raft, still running
// until the node closes it, logged each request it had under way or
// started meanwhile (a vote it asked for as the last node of a cluster
// stopping at once, entries to a follower) as an error.
//
// Once the node is stopping, a failed request to a peer (an error naming
// a peer or a target: the peer stopped first, its address refuses) is a
// debug line too; Raft's other errors (its own log's) stay errors.
func (l raftLogger) Error(msg string, args ...interface{}) {
	if logarg.StoppedHere(args) || l.isStopping() && toPeer(args) {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Error(msg, args...)
}

// normal reports whether Raft's warning msg is part of a node's normal
// course.
func (l raftLogger) normal(msg string, args []interface{}) bool {
	switch msg {
	case msgNoPeers, msgNotVoter, msgSendingOlder,
		msgVoteTermBehind, msgVoteIndexBehind, msgPreVoteTermBehind, msgPreVoteIndexBehind:
		return true
	case msgSingleElection:
		return l.single || fmt.Sprint(logarg.Value(args, "last-leader-id")) == ""
	case msgElectionRestart:
		return l.single
	case msgNoPrevious:
		err, _ := logarg.Value(args, "error").(error)
		return errors.Is(err, raft.ErrLogNotFound)
	}
	return false
}
