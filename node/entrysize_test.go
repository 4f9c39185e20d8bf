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
	old := maxEntryBytes
	maxEntryBytes = 64 << 10
	t.Cleanup(func() { maxEntryBytes = old })
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
	if wire, ok := WireError(entrySizeErr(make([]byte, maxEntryBytes+1))); !ok || !strings.HasPrefix(wire, "TOOLARGE ") {
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
