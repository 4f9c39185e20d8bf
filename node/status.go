package node

// Status is what a node reports about itself (INFO, ROLE).
type Status struct {
	Role        string // "master" (leader) or "slave" (follower)
	LeaderID    string
	LeaderAddr  string // RESP address of the leader, if known
	Term        uint64
	CommitIndex uint64
	Applied     uint64
	Fsync       string
	Raft        map[string]string // raft's own statistics
}

// AppliedIndex returns the index of the last entry applied here.
func (n *Node) AppliedIndex() uint64 { return n.fsm.Applied() }

// Status describes the node for INFO and ROLE.
func (n *Node) Status() Status {
	role := "slave"
	if n.IsLeader() {
		role = "master"
	}
	_, leaderID := n.raft.LeaderWithID()
	return Status{
		Role:        role,
		LeaderID:    string(leaderID),
		Term:        n.currentTerm(),
		CommitIndex: n.raft.CommitIndex(),
		Applied:     n.fsm.Applied(),
		Fsync:       n.cfg.Fsync.String(),
		Raft:        n.raft.Stats(),
	}
}
