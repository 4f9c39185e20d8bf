package node

import (
	"context"
	"time"

	"github.com/hashicorp/raft"
)

// membershipTimeout bounds a configuration change.
const membershipTimeout = 10 * time.Second

// Server is one entry of the Raft configuration.
type Server struct {
	ID      string
	Addr    string // Raft address
	Voter   bool
	Current bool // this node
}

// HasState reports whether this node has any Raft state: a term, a log
// entry or a snapshot. A node with state belongs to a cluster and must
// never bootstrap another.
func (n *Node) HasState() bool {
	return n.raft.CurrentTerm() > 0 || n.raft.LastIndex() > 0
}

// BootstrapCluster makes servers (all voters, this node among them) the
// first configuration of a new cluster. Raft refuses (raft.ErrCantBootstrap)
// if this node has state, and the check and the write are one step on
// Raft's own goroutine, so a vote or entry arriving meanwhile from another
// cluster's leader cannot slip between them.
func (n *Node) BootstrapCluster(servers []Server) error {
	var conf raft.Configuration
	for _, s := range servers {
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Addr)})
	}
	return n.raft.BootstrapCluster(conf).Error()
}

// Configuration returns the latest Raft configuration known here.
func (n *Node) Configuration() ([]Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, translateRaftErr(err)
	}
	var out []Server
	for _, s := range f.Configuration().Servers {
		out = append(out, Server{
			ID:      string(s.ID),
			Addr:    string(s.Address),
			Voter:   s.Suffrage == raft.Voter,
			Current: string(s.ID) == n.cfg.ID,
		})
	}
	return out, nil
}

// AddVoter adds a voter, or updates the address of (or promotes) the
// server with that ID. Leader only.
func (n *Node) AddVoter(id, addr string) error {
	// A leader that was the only voter skips confirming leadership for
	// reads; stop before the configuration can hold a second voter.
	n.singleVoter.Store(false)
	// Nor write groups before the group gate has looked at the new server
	// (groupgate.go).
	n.group.grouped.Store(false)
	defer n.updateGroupGate()
	defer n.updateVoters()
	defer n.blockLease()() // the majority changes (lease.go)
	return n.configured(n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, membershipTimeout))
}

// configured waits for a configuration change f: Raft commits it, then
// it is durable in this node's log too (leadersync.go), within
// membershipTimeout.
func (n *Node) configured(f raft.IndexFuture) error {
	if err := f.Error(); err != nil {
		return translateRaftErr(err)
	}
	if ls := n.stores.leader; ls != nil && !ls.waitFor(f.Index(), membershipTimeout) {
		return ErrTimeout
	}
	return nil
}

// AddNonvoter adds a server that receives the log but does not vote.
// Leader only.
func (n *Node) AddNonvoter(id, addr string) error {
	return n.configured(n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, membershipTimeout))
}

// RemoveServer removes the server with that ID from the configuration. On
// a follower the request is sent to the leader. Removing the leader itself
// makes it step down once the change is committed.
func (n *Node) RemoveServer(id string) error {
	if n.closed.Load() {
		return ErrClosed
	}
	if !n.IsLeader() {
		return n.adminOnLeader("REMOVE", id)
	}
	return n.RemoveServerHere(id)
}

// RemoveServerHere is RemoveServer on the leader, refusing with
// ErrNotLeader elsewhere (the leader's half of a forwarded request).
func (n *Node) RemoveServerHere(id string) error {
	if !n.IsLeader() {
		return n.notLeaderErr()
	}
	conf, err := n.Configuration()
	if err != nil {
		return err
	}
	if !hasServer(conf, id) {
		return ErrNoSuchNode
	}
	defer n.updateGroupGate()
	defer n.updateVoters()
	defer n.blockLease()() // the majority changes (lease.go)
	return n.configured(n.raft.RemoveServer(raft.ServerID(id), 0, membershipTimeout))
}

// TransferLeadership hands leadership to the voter with that ID, or to the
// most up-to-date voter when id is empty. On a follower the request is
// sent to the leader.
func (n *Node) TransferLeadership(id string) error {
	if n.closed.Load() {
		return ErrClosed
	}
	if !n.IsLeader() {
		if id == "" {
			return n.adminOnLeader("TRANSFER")
		}
		return n.adminOnLeader("TRANSFER", id)
	}
	return n.TransferLeadershipHere(id)
}

// TransferLeadershipHere is TransferLeadership on the leader, refusing
// with ErrNotLeader elsewhere.
func (n *Node) TransferLeadershipHere(id string) error {
	if !n.IsLeader() {
		return n.notLeaderErr()
	}
	if n.RestoreRunning() {
		return ErrRestoring // it would cut the restore short (restore.go)
	}
	// Followers vote for the transfer's target although they know a
	// leader: no lease from before or during it holds (lease.go). A
	// transfer that failed may still have its target campaigning for an
	// election timeout or two, so leases stay off a while after.
	unblock := n.blockLease()
	defer time.AfterFunc(2*n.electionTimeout, unblock)
	if id == "" {
		return translateRaftErr(n.raft.LeadershipTransfer().Error())
	}
	conf, err := n.Configuration()
	if err != nil {
		return err
	}
	for _, s := range conf {
		if s.ID == id {
			return translateRaftErr(n.raft.LeadershipTransferToServer(raft.ServerID(s.ID), raft.ServerAddress(s.Addr)).Error())
		}
	}
	return ErrNoSuchNode
}

func hasServer(conf []Server, id string) bool {
	for _, s := range conf {
		if s.ID == id {
			return true
		}
	}
	return false
}

func (n *Node) adminOnLeader(args ...string) error {
	if n.peers == nil {
		return n.notLeaderErr()
	}
	deadline := time.Now().Add(n.cfg.LeaderWait)
	leader, err := n.awaitLeader(deadline)
	if err != nil {
		return err
	}
	if leader == n.cfg.ID { // became leader meanwhile
		if args[0] == "REMOVE" {
			return n.RemoveServerHere(args[1])
		}
		id := ""
		if len(args) > 1 {
			id = args[1]
		}
		return n.TransferLeadershipHere(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), membershipTimeout)
	defer cancel()
	return n.peers.Admin(ctx, leader, args...)
}
