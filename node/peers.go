package node

import (
	"context"
	"time"
)

// Peers is what a node needs from the cluster layer: a way to reach the
// leader, and what gossip knows of the other nodes. The cluster package
// implements it over memberlist and pooled RESP connections; tests
// implement it in-process. A node without Peers is a single-node cluster
// whose followers (if any) answer ErrNotLeader.
//
// Leaders are named by Raft server ID; Peers resolves the ID to an address.
// All methods are safe for concurrent use.
type Peers interface {
	// Apply sends an encoded entry to the leader over the ordered stream:
	// entries sent by one goroutine reach the leader in the order sent. It
	// returns once the entry is on its way; an error means it was not
	// sent (the leader is unknown or unreachable).
	Apply(leader string, entry []byte) (Forwarded, error)
	// ReadIndex asks the leader for its read index: a commit index
	// confirmed by a confirmation round that started after the call.
	ReadIndex(ctx context.Context, leader string) (uint64, error)
	// Follows asks the voter id whether it follows leader (the asking
	// node) in term, and how long before the request reached it it last
	// heard from it (confirm.go): ErrNotFollowing if it does not,
	// ErrPeerTooOld if its build does not know the request.
	Follows(ctx context.Context, id, leader string, term uint64) (time.Duration, error)
	// Admin runs a membership change on the leader: "REMOVE" <id> or
	// "TRANSFER" [<id>].
	Admin(ctx context.Context, leader string, args ...string) error
	// Members lists the nodes gossip knows of, this one included.
	Members() []Member
}

// Forwarded is an entry sent to the leader, awaiting its answer.
type Forwarded interface {
	// Done is closed once the leader has answered or the connection
	// failed.
	Done() <-chan struct{}
	// Result is the answer once Done is closed: the entry's log index and
	// reply, or an error: the sentinel the leader named (errors.go),
	// ErrUncertain when the connection broke after sending, or another
	// error, which the node treats as uncertain too.
	Result() (index uint64, reply []byte, err error)
}

// Member is what gossip knows about one node.
type Member struct {
	ID       string
	RaftAddr string
	// Addr is the RESP address peers forward to; Announce the one clients
	// are told (CLUSTER SLOTS, ROLE); they differ behind NAT or port
	// mappings.
	Addr     string
	Announce string
	// AnnounceTLS is the TLS address clients are told ("" for none).
	AnnounceTLS string
	// State is the gossip state: "alive", "suspect", "dead" or "left".
	State string
	// Applied is the last applied index the node reported to this one,
	// at Reported (zero if it never reported), and LogFault whether its
	// Raft log was failing then (LogFault).
	Applied  uint64
	Reported time.Time
	LogFault bool
	// Durable is how far the node's applied entries were durable in its
	// log at Reported, SyncsAlways whether it runs --fsync always (zero
	// and false from builds that do not report them).
	Durable     uint64
	SyncsAlways bool
	// Entries is the newest log entry version the node applies
	// (raftfsm.VersionGroup; 0 from builds before groups), for the group
	// gate (groupgate.go).
	Entries int
}
