package node

import (
	"context"
	"sync"
	"time"
)

// Leader leases: how a leader serves linearizable reads without a
// confirmation round for each batch of them (Config.LeaseReads).
//
// A read is linearizable on the leader once no other node can have been
// elected since the read arrived. A confirmation round (confirm.go)
// proves it for one moment; a lease makes one round cover a period. The
// argument rests on what Raft's followers do (hashicorp/raft):
//
//   - a follower refuses to vote, or pre-vote, for anyone while it knows
//     a leader, unless the leader itself asked for the election (a
//     leadership transfer);
//   - it forgets its leader, and may vote, only after hearing nothing
//     from it for at least HeartbeatTimeout (its own).
//
// So when a majority answered, after time t0, that they follow this
// leader and last heard from it at most age before (a confirmation round,
// confirm.go), each of them refuses other candidates until t0 - age +
// HeartbeatTimeout by its own clock, and any new leader needs a vote from
// one of them. The lease therefore runs to t0 - age + leaseShare ×
// HeartbeatTimeout, by the leader's monotonic clock, t0 taken before the
// round began.
//
// What it assumes, and how each assumption is kept:
//
//   - Clocks advance at rates within 10% of each other (the remaining
//     share of the timeout); no wall clock is read, only the monotonic
//     one, so clock steps do not matter.
//   - Every node runs with the same --heartbeat-timeout (a follower with
//     a shorter one would forget its leader sooner).
//   - A node that restarts forgets its leader, and would vote at once: a
//     node that holds Raft state waits HeartbeatTimeout before it starts
//     Raft (New), so nothing it acknowledged before a crash is still
//     inside a lease when it can vote again.
//   - A leadership transfer makes followers vote despite a known leader,
//     and a configuration change moves the majority: both revoke the
//     lease before they start, and no lease is taken while one runs.
//   - The lease is the leader's for the term it was taken in; a lost or
//     regained leadership starts without one.
//
// A lease is renewed by a round in the background once half of it has
// run while reads keep coming, so under steady reads no read waits for
// a round. Without a valid lease a read waits for a round, as without
// leases.
type lease struct {
	mu sync.Mutex
	// until is when the lease ends, term the term it was taken in.
	until time.Time
	term  uint64
	// gen counts revocations: a round that began before one does not
	// grant a lease.
	gen uint64
	// blocked counts the transfers and configuration changes under way.
	blocked  int
	renewing bool
}

// leaseShare is the part of HeartbeatTimeout a lease lasts: the rest
// absorbs clocks that run at different rates.
const leaseShare = 0.9

// leaseLength is how long a lease taken now lasts.
func (n *Node) leaseLength() time.Duration {
	return time.Duration(float64(n.heartbeat) * leaseShare)
}

// leaseHeld reports whether this node, as leader in term, holds a lease
// now; when less than half of it is left it starts a renewal.
func (n *Node) leaseHeld(term uint64) bool {
	if !n.cfg.LeaseReads || !n.IsLeader() {
		return false
	}
	l := &n.lease
	now := time.Now()
	l.mu.Lock()
	ok := l.blocked == 0 && l.term == term && now.Before(l.until)
	renew := ok && !l.renewing && l.until.Sub(now) < n.leaseLength()/2
	if renew {
		l.renewing = true
	}
	l.mu.Unlock()
	if renew {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), readyWait)
			defer cancel()
			n.takeLease(ctx)
			l.mu.Lock()
			l.renewing = false
			l.mu.Unlock()
		}()
	}
	return ok
}

// takeLease runs a confirmation round (shared with concurrent readers, and
// begun after the call) and, when leases are on and nothing revoked them
// meanwhile, takes a lease from it. It returns the round's error: nil
// means this node was leader when the round confirmed it.
func (n *Node) takeLease(ctx context.Context) error {
	l := &n.lease
	start := time.Now()
	term := n.raft.CurrentTerm()
	l.mu.Lock()
	gen := l.gen
	l.mu.Unlock()
	age, _, err := n.verifier.do(ctx)
	if err != nil {
		return err
	}
	if !n.cfg.LeaseReads || n.raft.CurrentTerm() != term || !n.IsLeader() || age >= uint64(n.leaseLength()) {
		return nil
	}
	l.mu.Lock()
	if l.gen == gen && l.blocked == 0 {
		// The majority last heard from this node up to age before the
		// round reached them (confirm.go), which began after start.
		if until := start.Add(n.leaseLength() - time.Duration(age)); l.term != term || until.After(l.until) {
			l.until, l.term = until, term
		}
	}
	l.mu.Unlock()
	return nil
}

// blockLease revokes the lease and takes none until the returned func is
// called: around a leadership transfer or a configuration change.
func (n *Node) blockLease() (unblock func()) {
	l := &n.lease
	l.mu.Lock()
	l.gen++
	l.blocked++
	l.until = time.Time{}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.blocked--
		l.gen++
		l.mu.Unlock()
	}
}
