package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestEntryTooLarge: while a server does not apply split entries (a
// rolling upgrade), a write whose entry would pass the largest entry is
// refused with ErrEntryTooLarge before it is proposed, on the leader, on
// a follower, and when a follower's forwarded entry reaches the leader;
// the log stays healthy (no MISCONF, nothing held) and the next writes
// are served everywhere.
func TestEntryTooLarge(t *testing.T) {
	old := maxClusterEntryBytes
	maxClusterEntryBytes = 64 << 10
	t.Cleanup(func() { maxClusterEntryBytes = old })
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	oldID := tc.followers()[1].ID()
	tc.mu.Lock()
	tc.oldBuild = map[string]bool{oldID: true}
	tc.mu.Unlock()
	follower := tc.followers()[0]
	member := strings.Repeat("x", 100<<10)
	big := zaddEntry("k", member, 1)
	for name, n := range map[string]*Node{"leader": leader, "follower": follower} {
		if _, err := n.Propose(big)(); !errors.Is(err, ErrEntryTooLarge) || !strings.Contains(err.Error(), "at most 65536") {
			t.Fatalf("%s: a write of 100 KiB with entries of at most 64 KiB: %v", name, err)
		}
	}
	fwd := *big
	fwd.Term, fwd.Proposal = leader.currentTerm(), 1
	if _, err := leader.applyForwarded(fwd.Encode(nil)).Wait(); !errors.Is(err, ErrEntryTooLarge) {
		t.Fatalf("a forwarded entry of 100 KiB: %v", err)
	}
	if wire, ok := WireError(leader.entrySizeErr(make([]byte, maxClusterEntryBytes+1))); !ok || !strings.HasPrefix(wire, "TOOLARGE ") {
		t.Fatalf("wire code: %q, %v", wire, ok)
	}
	for _, n := range tc.all() {
		if f := n.LogFault(); f != nil {
			t.Fatalf("%s: log fault after a refused entry: %v", n.cfg.ID, f)
		}
	}
	for i, n := range []*Node{leader, follower} {
		if _, err := n.Propose(zaddEntry("k", "small", i+1))(); err != nil {
			t.Fatalf("a small write after: %v", err)
		}
	}
	for _, n := range tc.all() {
		if got := score(n, "k", member); got != "" {
			t.Fatalf("%s: the refused member is in the set (score %q)", n.cfg.ID, got)
		}
	}
}

// TestEntryTooLargeSingleNode: a single node's limit is its own (what
// the log stores in one entry), not the cluster's: a write over the
// cluster's limit is served, one over the node's is refused and leaves
// the log healthy.
func TestEntryTooLargeSingleNode(t *testing.T) {
	oldC, oldS := maxClusterEntryBytes, maxEntryBytes
	maxClusterEntryBytes, maxEntryBytes = 64<<10, 256<<10
	t.Cleanup(func() { maxClusterEntryBytes, maxEntryBytes = oldC, oldS })
	n := startNode(t, Config{})
	fits := strings.Repeat("f", 100<<10)
	if _, err := n.Propose(zaddEntry("k", fits, 1))(); err != nil {
		t.Fatalf("a write over the cluster's limit on a single node: %v", err)
	}
	big := strings.Repeat("b", 300<<10)
	if _, err := n.Propose(zaddEntry("k", big, 2))(); !errors.Is(err, ErrEntryTooLarge) || !strings.Contains(err.Error(), "at most 262144") {
		t.Fatalf("a write over the node's limit: %v", err)
	}
	if f := n.LogFault(); f != nil {
		t.Fatalf("log fault after a refused entry: %v", f)
	}
	if _, err := n.Propose(zaddEntry("k", "small", 3))(); err != nil {
		t.Fatalf("a small write after: %v", err)
	}
	if score(n, "k", fits) != "1" || score(n, "k", big) != "" {
		t.Fatalf("scores: fits %q, big %q", score(n, "k", fits), score(n, "k", big))
	}
}

// TestLargeWriteSplit: in a cluster whose servers all apply split
// entries, a write larger than one log entry is split and applied whole
// on every node, through the leader and through a follower; one larger
// than MaxSplitBytes is refused with that limit; a whole entry that large
// forwarded by a follower is still refused.
func TestLargeWriteSplit(t *testing.T) {
	oldC, oldS := maxClusterEntryBytes, maxSplitBytes
	maxClusterEntryBytes, maxSplitBytes = 64<<10, 512<<10
	t.Cleanup(func() { maxClusterEntryBytes, maxSplitBytes = oldC, oldS })
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	follower := tc.followers()[0]
	before := leader.raft.LastIndex()
	members := map[string]int{}
	for i, n := range []*Node{leader, follower} {
		m := strings.Repeat(string(rune('a'+i)), 300<<10)
		if _, err := n.Propose(zaddEntry("k", m, i+1))(); err != nil {
			t.Fatalf("%s: a write of 300 KiB in pieces of 64 KiB: %v", n.cfg.ID, err)
		}
		members[m] = i + 1
	}
	if got := leader.raft.LastIndex() - before; got < 10 {
		t.Fatalf("two writes of 300 KiB took %d log entries of at most 64 KiB", got)
	}
	if _, err := leader.Propose(zaddEntry("k", strings.Repeat("z", 600<<10), 9))(); !errors.Is(err, ErrEntryTooLarge) || !strings.Contains(err.Error(), "at most 524288") {
		t.Fatalf("a write over the node's limit: %v", err)
	}
	fwd := *zaddEntry("k", strings.Repeat("y", 100<<10), 1)
	fwd.Term, fwd.Proposal = leader.currentTerm(), 1
	if _, err := leader.applyForwarded(fwd.Encode(nil)).Wait(); !errors.Is(err, ErrEntryTooLarge) {
		t.Fatalf("a forwarded whole entry of 100 KiB: %v", err)
	}
	if _, err := follower.Propose(zaddEntry("k", "small", 5))(); err != nil {
		t.Fatal(err)
	}
	last := leader.raft.LastIndex()
	for _, n := range tc.all() {
		if err := n.WaitApplied(context.Background(), last); err != nil {
			t.Fatal(err)
		}
		for m, sc := range members {
			if got := score(n, "k", m); got != fmt.Sprint(sc) {
				t.Fatalf("%s: the split member %c...: score %q, want %d", n.cfg.ID, m[0], got, sc)
			}
		}
		if f := n.LogFault(); f != nil {
			t.Fatalf("%s: log fault: %v", n.cfg.ID, f)
		}
	}
}

// TestLargeWriteAcrossLeadershipChange: leadership moves while a split
// write's pieces are in flight. Its outcome is all or nothing on every
// node alike, and what the proposer answers agrees with it: applied when
// it says so, absent when it says it was not applied.
func TestLargeWriteAcrossLeadershipChange(t *testing.T) {
	oldC := maxClusterEntryBytes
	maxClusterEntryBytes = 4 << 10
	t.Cleanup(func() { maxClusterEntryBytes = oldC })
	rng := testutil.Rand(t, 0)
	tc := newTestCluster(t, 3, nil)
	applied, notApplied := 0, 0
	for round := range 8 {
		leader := tc.waitLeader()
		from := leader
		if round%2 == 1 {
			from = tc.followers()[0]
		}
		member := fmt.Sprintf("%d-%s", round, strings.Repeat("m", 200<<10))
		done := make(chan error, 1)
		go func() {
			_, err := from.Propose(zaddEntry("k", member, round))()
			done <- err
		}()
		time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond)
		to := tc.followers()[rng.IntN(2)]
		if err := leader.TransferLeadershipHere(to.ID()); err != nil {
			t.Logf("round %d: transfer: %v", round, err)
		}
		err := <-done
		now := tc.waitLeader()
		if _, err := now.Propose(zaddEntry("sync", "x", round))(); err != nil {
			t.Fatalf("round %d: a small write after: %v", round, err)
		}
		last := now.raft.LastIndex()
		var scores []string
		for _, n := range tc.all() {
			if err := n.WaitApplied(context.Background(), last); err != nil {
				t.Fatal(err)
			}
			scores = append(scores, score(n, "k", member))
		}
		if scores[0] != scores[1] || scores[1] != scores[2] {
			t.Fatalf("round %d: the nodes disagree on the split write: scores %q", round, scores)
		}
		switch {
		case err == nil:
			applied++
			if scores[0] != fmt.Sprint(round) {
				t.Fatalf("round %d: answered applied, score %q", round, scores[0])
			}
		case errors.Is(err, ErrNotApplied) || errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader):
			notApplied++
			if scores[0] != "" {
				t.Fatalf("round %d: answered %v, yet applied", round, err)
			}
		case errors.Is(err, ErrUncertain):
		default:
			t.Fatalf("round %d: %v", round, err)
		}
	}
	t.Logf("applied %d, not applied %d of 8", applied, notApplied)
}
