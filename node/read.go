package node

import (
	"context"
	"sync"
	"time"
)

// readyWait bounds how long a read waits for a new leader's barrier.
const readyWait = 5 * time.Second

// ReadBarrier returns once a read of the local state is linearizable: it
// reflects every write acknowledged before the call. On the leader it takes
// the commit index, confirms leadership with a heartbeat round (skipped
// when this node is the only voter: no one else can lead), and waits until
// that index is applied here. Concurrent callers share heartbeat rounds.
// With local set (a READONLY connection) the local state is read as is,
// which on a leader is at most one election timeout stale.
func (n *Node) ReadBarrier(ctx context.Context, local bool) error {
	if n.closed.Load() {
		return ErrClosed
	}
	if local && n.IsLeader() {
		return nil
	}
	if !n.Ready() {
		if err := n.awaitReady(); err != nil {
			return err
		}
	}
	index := n.raft.CommitIndex()
	if !n.singleVoter.Load() {
		if err := n.verifier.verify(ctx); err != nil {
			return err
		}
	}
	return n.waitApplied(ctx, index)
}

// ReadIndex is ReadBarrier's first half for a follower asking the leader:
// the commit index, confirmed by leadership.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	if !n.Ready() {
		if !n.IsLeader() {
			return 0, n.notLeaderErr()
		}
		if err := n.waitReady(ctx); err != nil {
			return 0, err
		}
	}
	index := n.raft.CommitIndex()
	if !n.singleVoter.Load() {
		if err := n.verifier.verify(ctx); err != nil {
			return 0, err
		}
	}
	return index, nil
}

func (n *Node) waitReady(ctx context.Context) error {
	deadline := time.NewTimer(readyWait)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !n.Ready() {
		if !n.IsLeader() {
			return n.notLeaderErr()
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return ErrTimeout
		case <-ctx.Done():
			return ErrTimeout
		case <-n.stop:
			return ErrClosed
		}
	}
	return nil
}

// verifier batches leadership confirmations: a caller joins the next round
// that starts after it arrived, so every read is confirmed by a heartbeat
// round that began after the read did.
type verifier struct {
	n       *Node
	mu      sync.Mutex
	next    *round
	running bool
}

type round struct {
	done chan struct{}
	err  error
}

func (v *verifier) verify(ctx context.Context) error {
	v.mu.Lock()
	if v.next == nil {
		v.next = &round{done: make(chan struct{})}
	}
	r := v.next
	if !v.running {
		v.running = true
		go v.loop()
	}
	v.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ErrTimeout
	}
}

func (v *verifier) loop() {
	for {
		v.mu.Lock()
		r := v.next
		v.next = nil
		if r == nil {
			v.running = false
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		if err := v.n.raft.VerifyLeader().Error(); err != nil {
			r.err = translateRaftErr(err)
		}
		close(r.done)
	}
}
