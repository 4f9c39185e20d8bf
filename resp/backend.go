package resp

import (
	"context"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// Backend is what the RESP edge needs from a node.
type Backend interface {
	// Propose hands an entry to the log and returns a function that waits
	// until it is applied and returns its result: for a command or a
	// transaction, possibly only on the leader, so a client's later reads
	// wait for its Result.Index here first (client.ownWrites). It does not
	// keep e (the caller reuses its slices once Propose returns).
	Propose(e *raftfsm.Entry) func() (raftfsm.Result, error)
	// ReadBarrier returns once a local read is linearizable; with local
	// set (READONLY connections) it only checks the node is not stale.
	ReadBarrier(ctx context.Context, local bool) error
	// View runs fn with the keyspace read-locked.
	View(fn func(ks *keyspace.Keyspace, now int64))
	// ReadView read-locks the keyspace for a run of reads and returns it
	// with the clock they read at; the caller calls ks.RUnlock.
	ReadView() (ks *keyspace.Keyspace, now int64)
	// Now is the clock proposals carry (Unix ms).
	Now() int64
	// AppliedIndex is the index of the last entry applied here (WATCH).
	AppliedIndex() uint64
	// WaitApplied waits until this node has applied index: a write's
	// Result.Index, which Propose may answer before it is applied here
	// (on a follower), before the writer reads here.
	WaitApplied(ctx context.Context, index uint64) error
	// Status describes the node for INFO and ROLE: key/value pairs.
	Status() node.Status
	// OnKeyReady registers the function called when a write leaves a
	// sorted set with members (db -1, key nil: any key may have).
	OnKeyReady(fn func(db int, key []byte))
}

// ClusterBackend is what the GOBLIN admin command needs beyond Backend:
// membership changes, which work on any node (a follower asks the
// leader). *node.Node implements it; a backend without it answers those
// subcommands with an error.
type ClusterBackend interface {
	RemoveServer(id string) error
	TransferLeadership(id string) error
}

// MemoryBackend is what maxmemory needs from the backend: the limit,
// which its leader enforces on writes (*node.Node has it), and whether
// this node is above its own limit, which decides what may be queued in
// a transaction here. A backend without it reports maxmemory 0 and
// refuses to set one.
type MemoryBackend interface {
	MaxMemory() uint64
	SetMaxMemory(bytes uint64)
	OverMaxMemory() bool
}
