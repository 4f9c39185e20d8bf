package node

import "errors"

// Errors returned by the write and read paths.
var (
	// ErrNotLeader: this node is not the leader and cannot forward.
	ErrNotLeader = errors.New("node is not the leader")
	// ErrNoLeader: no leader is known (election in progress or no quorum).
	ErrNoLeader = errors.New("no leader")
	// ErrTimeout: the operation did not complete within its deadline.
	ErrTimeout = errors.New("timed out")
	// ErrUncertain: leadership was lost while a write was in flight; it may
	// or may not have been applied.
	ErrUncertain = errors.New("leadership lost while the write was in flight")
	// ErrClosed: the node is shutting down.
	ErrClosed = errors.New("node is shutting down")
	// ErrStale: a READONLY read on a follower that has not heard from a
	// leader recently enough.
	ErrStale = errors.New("replica is stale")
)
