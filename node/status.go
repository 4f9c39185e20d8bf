package node

import (
	"sort"
	"time"
)

// Status is what a node reports about itself (INFO, ROLE, CLUSTER).
type Status struct {
	ID         string
	Role       string // "master" (leader) or "slave" (follower)
	State      string // Raft state: Leader, Follower, Candidate, Shutdown
	LeaderID   string
	LeaderAddr string // RESP address of the leader for clients, if known
	// LeaderTLSAddr is the leader's TLS address for clients, if it has one.
	LeaderTLSAddr string
	Term          uint64
	CommitIndex   uint64
	Applied       uint64
	// LastContact is how long ago a follower last heard from the leader
	// (-1: never).
	LastContact time.Duration
	Fsync       string
	// FailedEntries counts the log entries this node's state machine
	// recorded as failed since it started (raftfsm.FSM.Failed).
	FailedEntries uint64
	// LogWriteErr is why the Raft log cannot be written (nil when it
	// can), since LogWriteErrSince; writes are refused meanwhile.
	LogWriteErr      error
	LogWriteErrSince time.Time
	// SnapshotErr is why the last snapshot could not be written (nil when
	// it was), since SnapshotErrSince; LastSnapshot is when one last was.
	SnapshotErr      error
	SnapshotErrSince time.Time
	LastSnapshot     time.Time
	// Clustered is true when the node runs with peers (cluster mode).
	Clustered bool
	// Nodes lists the Raft configuration and the nodes gossip knows of,
	// sorted by ID, this one included.
	Nodes []NodeStatus
	Raft  map[string]string // raft's own statistics
}

// NodeStatus describes one node of the cluster as this node sees it.
type NodeStatus struct {
	ID       string
	Addr     string // RESP address for clients ("" if gossip does not know it)
	TLSAddr  string // TLS address for clients ("" for none, or unknown)
	RaftAddr string
	Self     bool
	Leader   bool
	// Suffrage is "voter" or "nonvoter", or "none" for a node gossip
	// knows that is not (yet) in the Raft configuration.
	Suffrage string
	// Gossip is the node's gossip state ("alive", "suspect", "dead",
	// "left"), or "unknown".
	Gossip string
	// Applied is the node's last applied index: its own for this node,
	// the last one it reported to the leader otherwise, with the time
	// since (Since < 0: never reported).
	Applied uint64
	Since   time.Duration
}

// AppliedIndex returns the index of the last entry applied here.
func (n *Node) AppliedIndex() uint64 { return n.fsm.Applied() }

// Status describes the node for INFO, ROLE and CLUSTER.
func (n *Node) Status() Status {
	role := "slave"
	if n.IsLeader() {
		role = "master"
	}
	_, leaderID := n.raft.LeaderWithID()
	st := Status{
		ID:          n.cfg.ID,
		Role:        role,
		State:       n.raft.State().String(),
		LeaderID:    string(leaderID),
		Term:        n.currentTerm(),
		CommitIndex: n.raft.CommitIndex(),
		Applied:     n.fsm.Applied(),
		LastContact: -1,
		Fsync:       n.cfg.Fsync.String(),
		Clustered:   n.peers != nil,
		Raft:        n.raft.Stats(),
	}
	st.FailedEntries = n.fsm.Failed()
	n.persistenceStatus(&st)
	if lc := n.raft.LastContact(); !lc.IsZero() {
		st.LastContact = time.Since(lc)
	}
	st.Nodes = n.nodes(string(leaderID))
	for _, ns := range st.Nodes {
		if ns.Leader {
			st.LeaderAddr, st.LeaderTLSAddr = ns.Addr, ns.TLSAddr
		}
	}
	return st
}

// nodes merges the Raft configuration with what gossip knows.
func (n *Node) nodes(leader string) []NodeStatus {
	byID := map[string]*NodeStatus{}
	get := func(id string) *NodeStatus {
		ns := byID[id]
		if ns == nil {
			ns = &NodeStatus{ID: id, Suffrage: "none", Gossip: "unknown", Since: -1}
			byID[id] = ns
		}
		return ns
	}
	if conf, err := n.Configuration(); err == nil {
		for _, s := range conf {
			ns := get(s.ID)
			ns.RaftAddr = s.Addr
			ns.Suffrage = "nonvoter"
			if s.Voter {
				ns.Suffrage = "voter"
			}
		}
	}
	if n.peers != nil {
		for _, m := range n.peers.Members() {
			ns := get(m.ID)
			ns.Addr = m.Announce
			ns.TLSAddr = m.AnnounceTLS
			if ns.RaftAddr == "" {
				ns.RaftAddr = m.RaftAddr
			}
			ns.Gossip = m.State
			if !m.Reported.IsZero() {
				ns.Applied = m.Applied
				ns.Since = time.Since(m.Reported)
			}
		}
	}
	self := get(n.cfg.ID)
	self.Self = true
	self.Applied = n.fsm.Applied()
	self.Since = 0
	if self.Gossip == "unknown" && n.peers == nil {
		self.Gossip = "alive"
	}
	out := make([]NodeStatus, 0, len(byID))
	for _, ns := range byID {
		ns.Leader = ns.ID == leader
		out = append(out, *ns)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// LeaderID returns the ID of the leader this node knows of ("" if none).
func (n *Node) LeaderID() string {
	_, id := n.raft.LeaderWithID()
	return string(id)
}

// RaftState returns the Raft state: Leader, Follower, Candidate or
// Shutdown.
func (n *Node) RaftState() string { return n.raft.State().String() }
