package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/raftfsm"
)

// enqueueTimeout bounds how long a proposal waits to enter Raft's queue.
const enqueueTimeout = 5 * time.Second

// Pending is a proposed entry whose outcome is not known yet: either a
// local Raft future (on the leader) or an entry forwarded to the leader.
type Pending struct {
	f   raft.ApplyFuture
	fwd ForwardWait
	err error
	// The entry and the node's deadline for finding a leader, kept in case
	// the leader refuses the entry and it must be sent again.
	n        *Node
	data     []byte
	deadline time.Time
}

// Propose hands e to the log without waiting and returns a function that
// waits for the result. On the leader the entry goes to Raft; on a
// follower it is forwarded to the leader, and the result is returned once
// the entry is applied here too, so the caller then reads its own write.
// Entries proposed by one goroutine are committed in the order proposed.
func (n *Node) Propose(e *raftfsm.Entry) func() (raftfsm.Result, error) {
	return n.propose(e).Wait
}

func (n *Node) propose(e *raftfsm.Entry) *Pending {
	if n.closed.Load() {
		return &Pending{err: ErrClosed}
	}
	if err := n.writeRefused(); err != nil {
		return &Pending{err: err}
	}
	data := e.Encode(nil)
	deadline := time.Now().Add(n.cfg.LeaderWait)
	var p *Pending
	if n.IsLeader() {
		p = n.proposeLocal(data)
	} else {
		p = n.forward(data, deadline)
	}
	p.n, p.data, p.deadline = n, data, deadline
	return p
}

// proposeLocal hands data to the local Raft, which refuses it unless this
// node leads. A new leader first waits for its term barrier and packed
// rules to be applied, so no key is created under stale rules.
func (n *Node) proposeLocal(data []byte) *Pending {
	if !n.IsLeader() {
		return &Pending{err: n.notLeaderErr()}
	}
	if err := n.writeRefused(); err != nil {
		return &Pending{err: err}
	}
	if !n.Ready() {
		ctx, cancel := context.WithTimeout(context.Background(), readyWait)
		err := n.waitReady(ctx)
		cancel()
		if err != nil {
			return &Pending{err: err}
		}
	}
	return &Pending{f: n.raft.Apply(data, enqueueTimeout)}
}

// forward sends data to the leader, waiting until deadline for one to be
// known (an election at start or after a failure ends) and reachable. It
// returns as soon as the entry is sent, so entries one goroutine forwards
// stay in order. Without peers it only waits for the election, and
// proposes here if this node won it.
func (n *Node) forward(data []byte, deadline time.Time) *Pending {
	for {
		leader, err := n.awaitLeader(deadline)
		if err != nil {
			return &Pending{err: err}
		}
		if leader == n.cfg.ID || n.peers == nil {
			return n.proposeLocal(data)
		}
		wait, err := n.peers.Apply(leader, data)
		if err == nil {
			return &Pending{fwd: wait}
		}
		// Not sent (the leader died, or gossip does not know its address
		// yet): look again shortly, within the deadline.
		n.log.Debug("forwarding to the leader failed", "leader", leader, "error", err)
		if err := n.pause(deadline, retryPause); err != nil {
			return &Pending{err: err}
		}
	}
}

// retryPause spaces out attempts to reach a leader that did not answer.
const retryPause = 50 * time.Millisecond

// pause sleeps d, or fails with ErrNoLeader if that would pass deadline.
func (n *Node) pause(deadline time.Time, d time.Duration) error {
	if time.Now().Add(d).After(deadline) {
		return ErrNoLeader
	}
	select {
	case <-n.stop:
		return ErrClosed
	case <-time.After(d):
		return nil
	}
}

// forwardTimeout bounds the wait for the leader's answer to a forwarded
// entry, and then for the entry to be applied here.
const forwardTimeout = 10 * time.Second

// Wait waits until the entry is committed and applied on this node and
// returns its result. An entry refused without being appended to any log
// (the node it reached no longer led) is proposed again to whoever leads
// now, within the deadline; a caller's later entries wait behind this one
// (Wait is called in order), so they stay in order.
func (p *Pending) Wait() (raftfsm.Result, error) {
	for {
		res, err := p.wait()
		retry := errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader)
		if !retry || p.n == nil || p.n.peers == nil || time.Now().After(p.deadline) {
			return res, err
		}
		if p.n.pause(p.deadline, leaderPoll) != nil {
			return res, err
		}
		q := p.n.forward(p.data, p.deadline)
		p.f, p.fwd, p.err = q.f, q.fwd, q.err
	}
}

func (p *Pending) wait() (raftfsm.Result, error) {
	switch {
	case p.err != nil:
		return raftfsm.Result{}, p.err
	case p.fwd != nil:
		return p.waitForwarded()
	}
	// Raft always answers a local future: with the result, or with an
	// error when leadership is lost or the node shuts down.
	if err := p.f.Error(); err != nil {
		return raftfsm.Result{}, translateRaftErr(err)
	}
	res, _ := p.f.Response().(raftfsm.Result)
	return res, res.Err
}

func (p *Pending) waitForwarded() (raftfsm.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
	index, reply, err := p.fwd(ctx)
	cancel()
	if err != nil {
		return raftfsm.Result{}, err
	}
	ctx, cancel = context.WithTimeout(context.Background(), forwardTimeout)
	err = p.n.waitApplied(ctx, index)
	cancel()
	if err != nil {
		return raftfsm.Result{}, err
	}
	return raftfsm.Result{Index: index, Reply: reply}, nil
}

// Apply proposes e and waits for its result.
func (n *Node) Apply(e *raftfsm.Entry) (raftfsm.Result, error) {
	return n.propose(e).Wait()
}

// ApplyForwarded is the leader's half of forwarding: it proposes an entry
// a follower sent, encoded, and returns a function that waits for its
// result. The entry must pass raftfsm.Validate (a command entry whose
// commands a client could have sent) or it is refused with ErrBadEntry
// before it reaches the log; its clock is restamped with this leader's,
// and a node that does not lead refuses with ErrNotLeader rather than
// forward again.
func (n *Node) ApplyForwarded(data []byte) func() (raftfsm.Result, error) {
	if n.closed.Load() {
		return (&Pending{err: ErrClosed}).Wait
	}
	e, err := raftfsm.Decode(data)
	if err == nil {
		err = raftfsm.Validate(e)
	}
	if err != nil {
		n.log.Warn("refused a forwarded entry", "error", err)
		return (&Pending{err: fmt.Errorf("%w: %w", ErrBadEntry, err)}).Wait
	}
	e.Time = n.Now()
	return n.proposeLocal(e.Encode(nil)).Wait
}

func (n *Node) notLeaderErr() error {
	if addr, _ := n.raft.LeaderWithID(); addr == "" {
		return ErrNoLeader
	}
	return ErrNotLeader
}

// leaderPoll is how often a request waiting for a leader looks again.
const leaderPoll = 10 * time.Millisecond

// awaitLeader returns the ID of the leader once one is known, polling
// until deadline.
func (n *Node) awaitLeader(deadline time.Time) (string, error) {
	for {
		if _, id := n.raft.LeaderWithID(); id != "" {
			return string(id), nil
		}
		if err := n.pause(deadline, leaderPoll); err != nil {
			return "", err
		}
	}
}

func translateRaftErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipTransferInProgress):
		// Refused before being appended: try the next leader.
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrUncertain
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrTimeout
	}
	return err
}
