package node

import "github.com/hashicorp/go-hclog"

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
	// waited its heartbeat timeout for a leader.
	msgSingleElection = "heartbeat timeout reached, starting election"
	// On a cluster node that waits to be bootstrapped or joined.
	msgNoPeers = "no known peers, aborting election"
)

func (l raftLogger) Warn(msg string, args ...interface{}) {
	if msg == msgNoPeers || l.single && msg == msgSingleElection {
		l.Logger.Info(msg, args...)
		return
	}
	l.Logger.Warn(msg, args...)
}
