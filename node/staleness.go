package node

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// READONLY reads on a follower are served from its local state, bounded in
// staleness: a read at time t reflects every write acknowledged (by any
// node) before t - MaxStaleness, by this node's clock. The bound is
// measured against the leader's commit, not against the time the leader
// was last heard from, which says nothing of what has been applied here.
//
// The follower keeps samples (at, index): index is a read index the
// leader gave (ReadIndex: its commit index, confirmed by a confirmation round)
// in answer to a request this node sent at time at. Every write
// acknowledged before at has an index at most index, so once index is
// applied here, the local state covers every write acknowledged before
// at. A read is served while some sample with an applied index is younger
// than MaxStaleness. Samples come from the follower's linearizable reads
// and, while READONLY reads keep coming, from a background request when
// the newest usable sample is half MaxStaleness old. A read that finds
// none fresh enough catches up first: it asks the leader for a read index
// and waits until it is applied, within MaxStaleness; it is refused with
// ErrStale when that fails, or at once when the leader has not been heard
// from for MaxStaleness.
type staleness struct {
	mu      sync.Mutex
	samples []freshSample // ordered by at, none older than MaxStaleness when added
	// okUntil is the monotonic time (monoNow) until which local reads are
	// fresh enough with what was applied when it was computed.
	okUntil    atomic.Int64
	refreshing atomic.Bool
}

type freshSample struct {
	at    int64 // monoNow when the request was sent
	index uint64
}

// maxFreshSamples bounds the samples kept.
const maxFreshSamples = 8

// monoBase anchors monoNow: a monotonic clock in nanoseconds.
var monoBase = time.Now()

func monoNow() int64 { return int64(time.Since(monoBase)) }

// record adds a sample and recomputes okUntil with applied.
func (s *staleness) record(at int64, index, applied uint64, bound time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.samples)
	for i > 0 && s.samples[i-1].at > at {
		i--
	}
	s.samples = append(s.samples, freshSample{})
	copy(s.samples[i+1:], s.samples[i:])
	s.samples[i] = freshSample{at, index}
	// Drop samples that can no longer make a read fresh.
	cut := 0
	for cut < len(s.samples)-1 && (len(s.samples)-cut > maxFreshSamples || s.samples[cut].at+int64(bound) < monoNow()) {
		cut++
	}
	s.samples = append(s.samples[:0], s.samples[cut:]...)
	s.recomputeLocked(applied, bound)
}

// recompute sets okUntil from the newest sample whose index is applied.
func (s *staleness) recompute(applied uint64, bound time.Duration) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recomputeLocked(applied, bound)
}

func (s *staleness) recomputeLocked(applied uint64, bound time.Duration) int64 {
	for i := len(s.samples) - 1; i >= 0; i-- {
		if s.samples[i].index <= applied {
			until := s.samples[i].at + int64(bound)
			if until > s.okUntil.Load() {
				s.okUntil.Store(until)
			}
			break
		}
	}
	return s.okUntil.Load()
}

// fresh returns nil when a READONLY read of the local state is within
// MaxStaleness of the leader's commit, catching up first if it must (see
// staleness), or ErrStale.
func (n *Node) fresh(ctx context.Context) error {
	if n.freshNow() {
		return nil
	}
	// Nothing applied is recent enough: catch up, unless the leader is
	// not even heard from.
	bound := n.cfg.MaxStaleness
	last := n.raft.LastContact()
	if last.IsZero() || time.Since(last) > bound {
		return ErrStale
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	index, _, err := n.sampleReadIndex(ctx)
	if err != nil {
		return ErrStale
	}
	if n.waitApplied(ctx, index) != nil {
		return ErrStale
	}
	n.stale.recompute(n.fsm.Applied(), bound)
	return nil
}

// freshNow reports whether the local state is within MaxStaleness of the
// leader's commit as it is, taking a new sample in the background once
// the current one is half way to its end.
func (n *Node) freshNow() bool {
	bound := n.cfg.MaxStaleness
	now := monoNow()
	until := n.stale.okUntil.Load()
	if now > until {
		until = n.stale.recompute(n.fsm.Applied(), bound)
	}
	if now > until {
		return false
	}
	if now > until-int64(bound)/2 {
		n.refreshFreshness()
	}
	return true
}

// sampleReadIndex asks the leader for its read index and records the
// answer as a staleness sample; deadline is the request's (batcher.do).
func (n *Node) sampleReadIndex(ctx context.Context) (index uint64, deadline time.Time, err error) {
	at := monoNow()
	index, deadline, err = n.leaderReads.do(ctx)
	if err == nil {
		n.stale.record(at, index, n.fsm.Applied(), n.cfg.MaxStaleness)
	}
	return index, deadline, err
}

// refreshFreshness takes a new sample in the background, one at a time.
func (n *Node) refreshFreshness() {
	if !n.stale.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer n.stale.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.MaxStaleness)
		defer cancel()
		n.sampleReadIndex(ctx)
	}()
}
