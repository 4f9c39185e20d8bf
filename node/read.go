package node

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// readyWait bounds how long a read waits for a new leader's barrier, and a
// follower's read for the leader's read index.
const readyWait = 5 * time.Second

// ReadBarrier returns once a read of the local state is linearizable: it
// reflects every write acknowledged before the call.
//
// On the leader it takes the commit index, confirms leadership with a
// confirmation round (confirm.go; skipped when this node is the only
// voter: no one else can lead), and waits until that index is applied here. On a follower it
// asks the leader for that same confirmed index (ReadIndex) and waits until
// it is applied here. Concurrent callers share confirmation rounds and, on a
// follower, requests to the leader.
//
// With local set (a READONLY connection) the local state is read as is: on
// the leader it is at most the leader lease (Raft's LeaderLeaseTimeout)
// stale; on a follower it reflects every write acknowledged more than
// MaxStaleness ago, catching up first if it must, or the read is refused
// with ErrStale (staleness.go).
//
// It waits at most readyWait, or until ctx ends if sooner. On a single
// voter that leads, with everything committed applied (a read between
// writes), on a leader holding its lease, and for a READONLY read within
// the staleness bound, it returns at once without allocating (readsNow).
func (n *Node) ReadBarrier(ctx context.Context, local bool) error {
	if n.closed.Load() {
		return ErrClosed
	}
	if n.readsNow(local) {
		return nil
	}
	if !local && n.peers != nil && !n.IsLeader() {
		// A follower's linearizable read, the usual one there: the
		// round it shares bounds its wait, so it needs no timer.
		return n.followerRead(ctx)
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	if n.peers == nil && !n.IsLeader() {
		// Without peers only the leader serves: wait for the election
		// (at start, or after a restart) to end.
		if _, err := n.awaitLeader(time.Now().Add(n.cfg.LeaderWait)); err != nil {
			return err
		}
	}
	if n.IsLeader() {
		if local {
			return nil
		}
		index, err := n.ReadIndex(ctx)
		if err == nil {
			return n.waitApplied(ctx, index)
		}
		if n.peers == nil || !(errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader)) {
			return err
		}
		// Leadership moved meanwhile: read as a follower.
	}
	if n.peers == nil {
		return n.notLeaderErr()
	}
	if local {
		return n.fresh(ctx)
	}
	return n.followerRead(ctx)
}

// followerRead waits for the leader's read index (shared with the reads
// that arrive meanwhile) and for this node to apply it. Without a deadline
// in ctx it waits until the round's (readyWait after the round was set
// up, so at most that after the call), and makes a timer only when it has
// to wait for the index to be applied.
func (n *Node) followerRead(ctx context.Context) error {
	index, deadline, err := n.sampleReadIndex(ctx)
	if err != nil {
		return err
	}
	if n.fsm.Applied() >= index {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		if deadline.IsZero() { // a batcher without a limit
			deadline = time.Now().Add(readyWait)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	return n.waitApplied(ctx, index)
}

// readsNow reports whether a read may run at once, with nothing to wait
// for and no round trip: the usual case, decided without a timer or an
// allocation. On a ready leader: a READONLY read; or a linearizable one
// when this node is the only voter or holds its lease, and has applied
// its commit index (ReadIndex's answer, read after the read arrived). On a
// follower: a READONLY read the staleness bound allows as it is.
// ReadsNow reports whether ReadBarrier would return at once, without a
// round or a wait (resp's event loop runs only such reads).
func (n *Node) ReadsNow(local bool) bool { return !n.closed.Load() && n.readsNow(local) }

func (n *Node) readsNow(local bool) bool {
	if n.Ready() {
		if local {
			return true
		}
		index, ok := n.ReadIndexNow()
		return ok && n.fsm.Applied() >= index
	}
	return local && n.peers != nil && !n.IsLeader() && n.freshNow()
}

// boundWait bounds ctx by readyWait when it has no deadline of its own.
func boundWait(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, readyWait)
}

// commitIndex is Raft's commit index, capped at what this node's log
// holds durably (leadersync.go): Raft may count a leader's copy before it
// is synced, and nothing past it is applied here before it is.
func (n *Node) commitIndex() uint64 {
	index := n.raft.CommitIndex()
	if ls := n.stores.leader; ls != nil {
		index = ls.capIndex(index)
	}
	return index
}

// ReadIndexNow is ReadIndex when it needs neither a round nor a wait: on
// a ready leader that is the only voter or holds its lease. ok is false
// when ReadIndex would have to wait.
func (n *Node) ReadIndexNow() (index uint64, ok bool) {
	if !n.Ready() {
		return 0, false
	}
	index = n.commitIndex()
	if !n.singleVoter.Load() && !n.leaseHeld(n.raft.CurrentTerm()) {
		return 0, false
	}
	return index, true
}

// ReadIndex is the leader's read index: its commit index, confirmed by a
// confirmation round that started after the call, or by the leader's lease
// (lease.go), unless it is the only voter. Once that index is applied on any node, a read there is
// linearizable. A follower calls it on the leader through Peers.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	if !n.Ready() {
		if !n.IsLeader() {
			return 0, n.notLeaderErr()
		}
		if err := n.waitReady(ctx); err != nil {
			return 0, err
		}
	}
	index := n.commitIndex()
	if !n.singleVoter.Load() && !n.leaseHeld(n.raft.CurrentTerm()) {
		if err := n.takeLease(ctx); err != nil {
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

// verifyLeader is Raft's confirmation (VerifyLeader), the round's
// fallback while a voter of an older build is needed for a majority
// (confirm.go tells why it is not used otherwise).
func (n *Node) verifyLeader() (uint64, error) {
	if err := n.raft.VerifyLeader().Error(); err != nil {
		if errors.Is(err, raft.ErrLeadershipLost) {
			// A read has no outcome to be unsure of: leadership
			// moved, so read as a follower (ReadBarrier).
			return 0, ErrNotLeader
		}
		return 0, translateRaftErr(err)
	}
	return 0, nil
}

// leaderReadIndex is a follower's round: the leader's read index, asked of
// whoever leads, retried while leadership moves, within readyWait.
func (n *Node) leaderReadIndex() (uint64, error) {
	deadline := time.Now().Add(readyWait)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for {
		leader, err := n.awaitLeader(deadline)
		if err != nil {
			return 0, err
		}
		if leader == n.cfg.ID {
			index, err := n.ReadIndex(ctx)
			if !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrNoLeader) {
				return index, err
			}
			// It lost leadership meanwhile: ask whoever leads now.
			if err := n.pause(deadline, retryPause); err != nil {
				return 0, err
			}
			continue
		}
		// Abandoned when a later term is applied here (termctx.go).
		actx, acancel := context.WithDeadline(n.termContext(), deadline)
		index, err := n.peers.ReadIndex(actx, leader)
		newTerm := actx.Err() == context.Canceled
		acancel()
		if err == nil {
			return index, nil
		}
		if errors.Is(err, ErrClosed) && n.closed.Load() {
			return 0, err
		}
		// A read is safe to retry whatever went wrong.
		n.log.Debug("read index from the leader failed", "leader", leader, "error", err, "new term", newTerm)
		if newTerm {
			select {
			case <-n.stop:
				return 0, ErrClosed
			default:
				continue // ask the new leader at once
			}
		}
		if err := n.pause(deadline, retryPause); err != nil {
			return 0, err
		}
	}
}

// batcher shares runs of fn among concurrent callers: a caller joins
// the next run that starts after it arrived, never one already under way,
// so every caller gets a result computed after its call began (a heartbeat
// round, or a read index, that happened after the read arrived). At most
// maxRounds runs are under way at once; callers that arrive meanwhile
// share the next run, which starts when one ends.
type batcher struct {
	fn func() (uint64, error)
	// limit bounds how long a run's callers wait, counted from when the
	// first of them set the run up (later ones joined it after): a caller
	// whose context has no deadline needs no timer of its own. Zero: only
	// the callers' contexts bound their waits.
	limit    time.Duration
	mu       sync.Mutex
	next     *round
	inflight int
	// runs counts the runs started, callers the calls that waited for
	// one.
	runs, callers atomic.Uint64
}

// maxRounds bounds the runs of one batcher under way at once. One: the
// reads that arrive during a round all share the next, so a round trip to
// the leader serves more of them. Overlapping rounds answer sooner when
// the CPU is idle, but under load they cost more CPU per read than they
// save in waiting: linearizable ZSCORE on a follower of a 3-node cluster,
// redis-benchmark -c 50, 5 alternated runs, ran at 20.3k/s with one round
// at a time against 15.8k/s with up to four (-P 1), 295k against 270k
// (-P 16, 3 runs).
const maxRounds = 1

type round struct {
	done  chan struct{}
	index uint64
	err   error
	// With a limit: expired is closed at deadline by timer, unless the
	// run ended first.
	deadline time.Time
	expired  chan struct{}
	timer    *time.Timer
}

// do joins the next run and returns its result, and the run's deadline
// (zero without a limit); ErrTimeout once ctx ends or the deadline passes.
func (b *batcher) do(ctx context.Context) (uint64, time.Time, error) {
	b.callers.Add(1)
	b.mu.Lock()
	if b.next == nil || b.next.lapsed() {
		// A run whose callers all gave up (it waited past its deadline
		// for the one under way) is left to no one: a new caller sets up
		// a fresh one rather than time out at once.
		b.next = b.newRound()
	}
	r := b.next
	b.startLocked()
	b.mu.Unlock()
	select {
	case <-r.done:
		return r.index, r.deadline, r.err
	case <-r.expired: // nil without a limit
		return 0, r.deadline, ErrTimeout
	case <-ctx.Done():
		return 0, r.deadline, ErrTimeout
	}
}

// lapsed reports whether r's deadline has passed.
func (r *round) lapsed() bool {
	select {
	case <-r.expired: // nil without a limit
		return true
	default:
		return false
	}
}

func (b *batcher) newRound() *round {
	r := &round{done: make(chan struct{})}
	if b.limit > 0 {
		r.deadline = time.Now().Add(b.limit)
		r.expired = make(chan struct{})
		r.timer = time.AfterFunc(b.limit, func() { close(r.expired) })
	}
	return r
}

// startLocked starts the waiting run, if there is one and room for it.
func (b *batcher) startLocked() {
	if r := b.takeLocked(); r != nil {
		go b.run(r)
	}
}

// takeLocked returns the waiting run, counted as under way, if there is
// one and room for it.
func (b *batcher) takeLocked() *round {
	if b.next == nil || b.inflight >= maxRounds {
		return nil
	}
	r := b.next
	b.next = nil
	b.inflight++
	b.runs.Add(1)
	return r
}

// run runs r, then on the same goroutine whatever run waits meanwhile.
func (b *batcher) run(r *round) {
	for r != nil {
		r.index, r.err = b.fn()
		close(r.done)
		if r.timer != nil {
			r.timer.Stop()
		}
		b.mu.Lock()
		b.inflight--
		r = b.takeLocked()
		b.mu.Unlock()
	}
}
