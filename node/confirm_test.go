package node

import (
	"context"
	"errors"
	"testing"
	"time"
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
	if age < 0 || age > 300*time.Millisecond {
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
		_, err := leader.ReadIndex(ctx)
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
	if err := readIndex(); err == nil {
		t.Fatal("a read index was confirmed with no follower answering the round")
	}
	if !leader.IsLeader() {
		t.Fatal("the leader lost leadership meanwhile: Raft's own traffic was cut too")
	}
	setCut(fs[1].ID(), false)
	if err := readIndex(); err != nil {
		t.Fatalf("one follower answering (a majority with the leader): %v", err)
	}
}
