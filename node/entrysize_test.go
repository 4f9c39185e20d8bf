package node

import (
	"errors"
	"strings"
	"testing"
)

// TestEntryTooLarge: a write whose entry would pass the largest entry is
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
	if _, err := leader.ApplyForwarded(fwd.Encode(nil))(); !errors.Is(err, ErrEntryTooLarge) {
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
