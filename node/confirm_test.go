package node

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
)

// A follower says it follows the leader it follows, in its term, with
// the age of its last contact; any other leader or term, or a node that
// leads, gets ErrNotFollowing.
func TestFollowsHere(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	f := tc.followers()[0]
	term := leader.raft.CurrentTerm()
	var age time.Duration
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if age, err = f.FollowsHere(leader.ID(), term); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("a follower of %s in term %d: %v", leader.ID(), term, err)
	}
	if age < 0 || age > 2*time.Second {
		t.Fatalf("a follower last heard from its leader %v ago (heartbeats every 30 ms)", age)
	}
	for _, c := range []struct {
		n      *Node
		leader string
		term   uint64
	}{
		{f, f.ID(), term}, {f, leader.ID(), term + 1}, {f, leader.ID(), term - 1}, {leader, leader.ID(), term},
	} {
		if _, err := c.n.FollowsHere(c.leader, c.term); !errors.Is(err, ErrNotFollowing) {
			t.Errorf("%s asked whether it follows %s in term %d: %v, want ErrNotFollowing", c.n.ID(), c.leader, c.term, err)
		}
	}
}

// The leader's confirmation round counts the other voters' own answers,
// not Raft's: with Raft's traffic flowing but neither follower answering
// on the peers' plane, no read index is confirmed; one follower's answer
// makes a majority.
func TestConfirmationAsksTheVoters(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	fs := tc.followers()
	readIndex := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
		defer cancel()
		_, err := tc.waitLeader().ReadIndex(ctx)
		return err
	}
	if err := readIndex(); err != nil {
		t.Fatalf("every node up: %v", err)
	}
	setCut := func(id string, cut bool) {
		tc.mu.Lock()
		tc.cut[id] = cut
		tc.mu.Unlock()
	}
	setCut(fs[0].ID(), true)
	setCut(fs[1].ID(), true)
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := leader.ReadIndex(ctx); err == nil {
		t.Fatal("a read index was confirmed with no follower answering the round")
	}
	setCut(fs[1].ID(), false)
	if err := readIndex(); err != nil {
		t.Fatalf("one follower answering (a majority with the leader): %v", err)
	}
}

// frozenAnswers is a node's Raft transport that can be frozen as a
// stopped process is: while frozen, each peer gets one more AppendEntries
// request, acts on it, and its answer is held; the node's other requests
// wait unsent. On thaw the held answers arrive first, then the rest go.
// Without pipelining, so each request is one call.
type frozenAnswers struct {
	*raft.InmemTransport
	mu     sync.Mutex
	frozen bool
	sent   map[raft.ServerID]bool
	thawed chan struct{}
}

func (f *frozenAnswers) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

func (f *frozenAnswers) freeze() {
	f.mu.Lock()
	f.frozen, f.sent, f.thawed = true, map[raft.ServerID]bool{}, make(chan struct{})
	f.mu.Unlock()
}

func (f *frozenAnswers) thaw() {
	f.mu.Lock()
	f.frozen = false
	close(f.thawed)
	f.mu.Unlock()
}

func (f *frozenAnswers) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	f.mu.Lock()
	frozen, thawed := f.frozen, f.thawed
	first := frozen && !f.sent[id]
	if first {
		f.sent[id] = true
	}
	f.mu.Unlock()
	if frozen && !first {
		<-thawed // not sent until the thaw
		return f.InmemTransport.AppendEntries(id, target, args, resp)
	}
	err := f.InmemTransport.AppendEntries(id, target, args, resp)
	if first {
		<-thawed // acted on; its answer is held until the thaw
	}
	return err
}

// A leader frozen as SIGSTOP freezes a process is replaced by the others,
// and the answers to its last requests, sent before the election, reach
// it when it runs again: a read that began on it after the new leader
// acknowledged a write must not miss that write. Raft's VerifyLeader
// counts those answers and served such reads; the confirmation round
// asks the voters after the read began. The frozen leader's Raft still
// runs here, and would step down once its heartbeat timeout passed
// without answers: it has a longer one (600 ms) than the others (150
// ms), so they elect a leader first.
func TestFrozenLeaderServesNoStaleRead(t *testing.T) {
	var mu sync.Mutex
	frozen := map[string]*frozenAnswers{}
	tc := newTestCluster(t, 3, func(c *Config) {
		f := &frozenAnswers{InmemTransport: c.Transport.(*raft.InmemTransport)}
		c.Transport = f
		c.HeartbeatTimeout, c.ElectionTimeout = 150*time.Millisecond, 150*time.Millisecond
		if c.ID == "n3" {
			c.HeartbeatTimeout, c.ElectionTimeout = 600*time.Millisecond, 600*time.Millisecond
		}
		mu.Lock()
		frozen[c.ID] = f
		mu.Unlock()
	})
	if first := tc.waitLeader(); first.ID() != "n3" {
		if err := first.TransferLeadershipHere("n3"); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Poll(t, 10*time.Second, "n3 leads", func() bool { return tc.node("n3").Ready() })
	old := tc.node("n3")
	if _, err := old.Apply(zaddEntry("k", "m", 1)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	f := frozen[old.ID()]
	mu.Unlock()
	f.freeze()
	// Nothing reaches the frozen leader either.
	tc.mu.Lock()
	for id, o := range tc.trans {
		if id != old.ID() {
			o.Disconnect(tc.trans[old.ID()].LocalAddr())
		}
	}
	tc.mu.Unlock()
	leader := tc.leaderOtherThan(old)
	if _, err := leader.Apply(zaddEntry("k", "m", 2)); err != nil {
		t.Fatal(err)
	}
	// Reads that begin now, on the leader still frozen: they wait.
	type result struct {
		err error
		got string
	}
	const reads = 20
	results := make(chan result, reads)
	for range reads {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			err := old.ReadBarrier(ctx, false)
			r := result{err: err}
			if err == nil {
				r.got = score(old, "k", "m")
			}
			results <- r
		}()
	}
	time.Sleep(200 * time.Millisecond)
	f.thaw()
	served := 0
	for range reads {
		r := <-results
		if r.err != nil {
			continue
		}
		served++
		if r.got != "2" {
			t.Fatalf("a read that began on the old leader after the new leader acknowledged a write read %q", r.got)
		}
	}
	t.Logf("%d reads began on the frozen leader after the new leader's write; %d served, none stale", reads, served)
}

// Voters of an older build do not know the confirmation round's request:
// the leader confirms with Raft's VerifyLeader, and takes no lease from
// it, so every read needs a round of its own.
func TestOlderVotersGiveNoLease(t *testing.T) {
	tc := newTestCluster(t, 3, leaseReads)
	leader := tc.waitLeader()
	fs := tc.followers()
	tc.mu.Lock()
	for _, f := range fs {
		tc.tooOld[f.ID()] = true
	}
	tc.mu.Unlock()
	const reads = 50
	if rounds := sequentialReads(t, leader, reads); rounds < reads {
		t.Fatalf("%d reads took %d rounds with Raft's confirmation, which grants no lease", reads, rounds)
	}
}
