package node

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/raftfsm"
)

// enqueueTimeout bounds how long a proposal waits to enter Raft's queue.
const enqueueTimeout = 5 * time.Second

// Pending is a proposed entry whose outcome is not known yet.
type Pending struct {
	f   raft.ApplyFuture
	err error
}

// Propose hands e to Raft without waiting and returns a function that
// waits for the result. Entries proposed by one goroutine are committed in
// the order proposed.
func (n *Node) Propose(e *raftfsm.Entry) func() (raftfsm.Result, error) {
	return n.propose(e).Wait
}

func (n *Node) propose(e *raftfsm.Entry) *Pending {
	if n.closed.Load() {
		return &Pending{err: ErrClosed}
	}
	if !n.Ready() {
		if err := n.awaitReady(); err != nil {
			return &Pending{err: err}
		}
	}
	return &Pending{f: n.raft.Apply(e.Encode(nil), enqueueTimeout)}
}

// Wait waits until the entry is committed and applied on this node and
// returns its result. Raft always answers a future: with the result, or
// with an error when leadership is lost or the node shuts down.
func (p *Pending) Wait() (raftfsm.Result, error) {
	if p.err != nil {
		return raftfsm.Result{}, p.err
	}
	if err := p.f.Error(); err != nil {
		return raftfsm.Result{}, translateRaftErr(err)
	}
	res, _ := p.f.Response().(raftfsm.Result)
	return res, nil
}

// Apply proposes e and waits for its result.
func (n *Node) Apply(e *raftfsm.Entry) (raftfsm.Result, error) {
	return n.propose(e).Wait()
}

// leaderWait bounds how long a command waits for an election to end.
const leaderWait = 5 * time.Second

// awaitLeader waits until some node is the leader (an election at start
// or after a failure ends), or returns ErrNoLeader after leaderWait.
func (n *Node) awaitLeader() error {
	deadline := time.Now().Add(leaderWait)
	for {
		if addr, _ := n.raft.LeaderWithID(); addr != "" {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrNoLeader
		}
		select {
		case <-n.stop:
			return ErrClosed
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// awaitReady waits for an election to end and, when this node won it, for
// its term barrier and rules to be applied.
func (n *Node) awaitReady() error {
	if !n.IsLeader() {
		if err := n.awaitLeader(); err != nil {
			return err
		}
		if !n.IsLeader() {
			return ErrNotLeader
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyWait)
	defer cancel()
	return n.waitReady(ctx)
}

func (n *Node) notLeaderErr() error {
	if addr, _ := n.raft.LeaderWithID(); addr == "" {
		return ErrNoLeader
	}
	return ErrNotLeader
}

func translateRaftErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return ErrUncertain
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrTimeout
	}
	return err
}
