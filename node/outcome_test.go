package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
)

// heal reconnects a partitioned node to the others.
func (tc *testCluster) heal(id string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	delete(tc.cut, id)
	tr := tc.trans[id]
	for oid, o := range tc.trans {
		if oid != id {
			tr.Connect(o.LocalAddr(), o)
			o.Connect(tr.LocalAddr(), tr)
		}
	}
}

// members returns the members of key in n's local state.
func members(n *Node, key string) map[string]bool {
	out := map[string]bool{}
	n.View(func(ks *keyspace.Keyspace, now int64) {
		e := ks.DB(0).Get([]byte(key), now)
		if e == nil {
			return
		}
		e.Z.Range(0, e.Z.Len(), false, func(m []byte, _ float64) bool {
			out[string(m)] = true
			return true
		})
	})
	return out
}

// outcomeTally classifies the answers writers got against what the final
// state holds.
type outcomeTally struct {
	mu sync.Mutex
	// answers by member: nil for an acknowledged write, else the error.
	answers map[string]error
}

func (o *outcomeTally) record(member string, err error) {
	o.mu.Lock()
	o.answers[member] = err
	o.mu.Unlock()
}

// check compares the answers with the members present: an acknowledged
// write must be there (else lost), a write answered with an error that
// says it was not applied must not be (else phantom). ErrUncertain says
// neither; it is counted.
func (o *outcomeTally) check(t *testing.T, present map[string]bool) (uncertain int) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	acked, failed, lost, phantom, took := 0, 0, 0, 0, 0
	for m, err := range o.answers {
		switch {
		case err == nil:
			acked++
			if !present[m] {
				lost++
				t.Errorf("lost: the write of %s was acknowledged and is not in the state", m)
			}
		case errors.Is(err, ErrUncertain):
			uncertain++
			if present[m] {
				took++
			}
		default:
			failed++
			if present[m] {
				phantom++
				t.Errorf("phantom: the write of %s was answered %v and is in the state", m, err)
			}
		}
	}
	t.Logf("%d acknowledged, %d failed, %d uncertain (%d of them took effect); %d lost, %d phantom",
		acked, failed, uncertain, took, lost, phantom)
	return uncertain
}

// Writes in flight on every node while the leader is cut off, again and
// again, get answers that tell the truth: every acknowledged write is in
// the final state, no write answered as failed is, and since every
// partition heals well within OutcomeWait no answer is left uncertain.
// (The leader's in-flight entries are answered once it learns the new
// leader's log: some were committed, by it after the heal or by the new
// leader when they had reached a follower, and get their real reply.)
func TestWritesInFlightAcrossLeaderPartitions(t *testing.T) {
	rng := testutil.Rand(t, 11)
	tc := newTestCluster(t, 3, nil)
	tally := &outcomeTally{answers: map[string]error{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				nodes := tc.all()
				n := nodes[c%len(nodes)]
				m := fmt.Sprintf("c%d-%d", c, i)
				_, err := n.Apply(zaddEntry("k", m, i))
				tally.record(m, err)
			}
		}()
	}
	for round := range 6 {
		leader := tc.waitLeader()
		tc.partition(leader.ID())
		d := time.Duration(100+rng.IntN(900)) * time.Millisecond
		t.Logf("round %d: %s cut off for %v", round, leader.ID(), d)
		time.Sleep(d) // the length of the fault, not a wait for a condition
		tc.heal(leader.ID())
	}
	close(stop)
	wg.Wait()
	leader := tc.waitLeader()
	if err := leader.ReadBarrier(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if uncertain := tally.check(t, members(leader, "k")); uncertain != 0 {
		t.Errorf("%d writes left uncertain although every partition healed within OutcomeWait", uncertain)
	}
	applied, notApplied := resolvedCounts(tc)
	t.Logf("outcomes learned after a leadership change: %d applied, %d not applied", applied, notApplied)
	if applied+notApplied == 0 {
		t.Error("no write was in flight across a leadership change: the test exercised nothing")
	}
}

// resolvedCounts sums what the nodes learned of writes whose leader's
// answer was lost.
func resolvedCounts(tc *testCluster) (applied, notApplied uint64) {
	for _, n := range tc.all() {
		applied += n.props.resolvedApplied.Load()
		notApplied += n.props.resolvedNotApplied.Load()
	}
	return applied, notApplied
}

// A leader cut off with a write in flight cannot learn its outcome while
// the cut lasts: after OutcomeWait it answers ErrUncertain, not an error
// that says the write was not applied, and not before.
func TestUncertainWhenTheOutcomeCannotBeLearned(t *testing.T) {
	const wait = 700 * time.Millisecond
	tc := newTestCluster(t, 3, func(c *Config) { c.OutcomeWait = wait })
	for attempt := 0; ; attempt++ {
		leader := tc.waitLeader()
		tc.partition(leader.ID())
		start := time.Now()
		_, err := leader.Apply(zaddEntry("k", "m", attempt))
		took := time.Since(start)
		tc.heal(leader.ID())
		if errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader) {
			// It had stepped down before the write reached Raft: refused,
			// truthfully. Try again.
			if attempt == 5 {
				t.Fatalf("the cut-off leader never took the write in: %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrUncertain) {
			t.Fatalf("a write in flight on a cut-off leader: %v, want ErrUncertain", err)
		}
		if took < wait {
			t.Fatalf("answered ErrUncertain after %v, before OutcomeWait (%v)", took, wait)
		}
		if n := leader.props.resolvedUncertain.Load(); n != 1 {
			t.Fatalf("resolvedUncertain = %d", n)
		}
		return
	}
}

// A forwarded write whose answer is lost (the connection to the leader
// broke after sending) gets its real reply as soon as the follower has
// applied it, not an uncertain one.
func TestForwardedAnswerLost(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	f := tc.followers()[0]
	tc.mu.Lock()
	tc.lose = loseAnswer
	tc.mu.Unlock()
	res, err := f.Apply(zaddEntry("k", "m", 1))
	if err != nil || string(res.Reply) != ":1\r\n" {
		t.Fatalf("a committed write whose answer was lost: %q %v, want :1", res.Reply, err)
	}
	if got := score(f, "k", "m"); got != "1" {
		t.Fatalf("the follower answered before applying the write: score %q", got)
	}
	if n := f.props.resolvedApplied.Load(); n != 1 {
		t.Fatalf("resolvedApplied = %d", n)
	}
}

// A forwarded write that never reached the leader, which keeps leading,
// cannot be told from one still in flight: after OutcomeWait it is
// ErrUncertain. Once the term moves on, the same loss is known for what it
// is: not applied.
func TestForwardedEntryLost(t *testing.T) {
	const wait = 500 * time.Millisecond
	tc := newTestCluster(t, 3, func(c *Config) { c.OutcomeWait = wait })
	f := tc.followers()[0]
	tc.mu.Lock()
	tc.lose = loseEntry
	tc.mu.Unlock()
	start := time.Now()
	if _, err := f.Apply(zaddEntry("k", "m", 1)); !errors.Is(err, ErrUncertain) {
		t.Fatalf("a lost forwarded write under a stable leader: %v, want ErrUncertain", err)
	}
	if took := time.Since(start); took < wait {
		t.Fatalf("ErrUncertain after %v, before OutcomeWait", took)
	}
	// Now the loss, then a leadership change: the follower learns that
	// the entry was not applied.
	p := f.propose(zaddEntry("k", "m", 2), false)
	if err := f.TransferLeadership(""); err != nil {
		t.Logf("transfer: %v", err)
	}
	_, err := p.Wait()
	tc.mu.Lock()
	tc.lose = 0
	tc.mu.Unlock()
	if !errors.Is(err, ErrNotApplied) && !errors.Is(err, ErrUncertain) {
		t.Fatalf("a lost forwarded write across a leadership change: %v", err)
	}
	t.Logf("across a leadership change: %v", err)
	if got := score(tc.waitLeader(), "k", "m"); got != "" {
		t.Fatalf("a lost write took effect: score %q", got)
	}
}
