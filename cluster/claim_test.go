package cluster

import (
	"testing"

	"github.com/hashicorp/memberlist"
)

// stubNode is a Node with no Raft behind it, for the claim rules.
type stubNode struct {
	Node
	state bool
}

func (s *stubNode) HasState() bool { return s.state }

func newClaimTest(t *testing.T) (*Cluster, *stubNode) {
	c, err := New(Config{ID: "n2", RaftBind: "127.0.0.1:0", Addr: "a2", GossipAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.trans.Close() })
	n := &stubNode{}
	c.node = n
	for _, id := range []string{"n1", "n3", "n0"} {
		c.observe(&memberlist.Node{Name: id, Meta: (&Meta{ID: id, Raft: "r", Addr: "a"}).encode()}, true)
	}
	return c, n
}

// A node grants one live claimer at a time, never while it has state or
// is bootstrapping itself, and frees its promise when the claimer
// releases it or leaves the gossip.
func TestClaimRules(t *testing.T) {
	c, n := newClaimTest(t)
	set := []string{"n1", "n2", "n3"}
	if ok, why := c.decideClaim(&message{From: "n1", Nonce: 1, Set: set}); !ok {
		t.Fatalf("first claim denied: %s", why)
	}
	if ok, _ := c.decideClaim(&message{From: "n1", Nonce: 2, Set: set}); !ok {
		t.Fatal("the same claimer's retry was denied")
	}
	if ok, _ := c.decideClaim(&message{From: "n0", Nonce: 3, Set: []string{"n0", "n2", "n3"}}); ok {
		t.Fatal("a second claimer was granted while the first is alive")
	}
	c.handleRelease(&message{From: "n1", Nonce: 1}) // stale nonce: ignored
	if ok, _ := c.decideClaim(&message{From: "n0", Nonce: 3, Set: []string{"n0", "n2", "n3"}}); ok {
		t.Fatal("a release with an old nonce freed the promise")
	}
	c.handleRelease(&message{From: "n1", Nonce: 2})
	if ok, _ := c.decideClaim(&message{From: "n0", Nonce: 3, Set: []string{"n0", "n2", "n3"}}); !ok {
		t.Fatal("claim denied after the first claimer released")
	}
	c.observe(&memberlist.Node{Name: "n0", Meta: (&Meta{ID: "n0", Raft: "r", Addr: "a"}).encode()}, false)
	if ok, _ := c.decideClaim(&message{From: "n3", Nonce: 4, Set: set}); !ok {
		t.Fatal("claim denied after the previous claimer died")
	}
	if ok, _ := c.decideClaim(&message{From: "n1", Nonce: 5, Set: []string{"n1", "n3", "n4"}}); ok {
		t.Fatal("granted a claim for a set without this node")
	}
	c.grant = claim{to: "n2", nonce: 9} // bootstrapping itself
	if ok, _ := c.decideClaim(&message{From: "n1", Nonce: 6, Set: set}); ok {
		t.Fatal("granted a claim while bootstrapping itself")
	}
	c.grant = claim{}
	n.state = true
	if ok, _ := c.decideClaim(&message{From: "n1", Nonce: 7, Set: set}); ok {
		t.Fatal("granted a claim while having Raft state")
	}
}

// The bootstrap set is the Expect lowest IDs; only its lowest member
// claims, and nobody does once any member has state.
func TestBootstrapSet(t *testing.T) {
	c, _ := newClaimTest(t)
	c.cfg.BootstrapExpect = 3
	c.meta.Expect = 3
	if set, why, done := c.bootstrapSet(); set != nil || done {
		t.Fatalf("n2 is not the lowest, yet: %v %q %v", set, why, done)
	}
	c.observe(&memberlist.Node{Name: "n0", Meta: (&Meta{ID: "n0", Raft: "r", Addr: "a"}).encode()}, false)
	c.observe(&memberlist.Node{Name: "n1", Meta: (&Meta{ID: "n1", Raft: "r", Addr: "a"}).encode()}, false)
	if set, _, _ := c.bootstrapSet(); set != nil {
		t.Fatalf("only two nodes alive, yet a set: %v", set)
	}
	c.observe(&memberlist.Node{Name: "n4", Meta: (&Meta{ID: "n4", Raft: "r4", Addr: "a"}).encode()}, true)
	set, why, _ := c.bootstrapSet()
	if len(set) != 3 || set[0].ID != "n2" || set[1].ID != "n3" || set[2].ID != "n4" {
		t.Fatalf("set %v (%s)", set, why)
	}
	c.observe(&memberlist.Node{Name: "n5", Meta: (&Meta{ID: "n5", Raft: "r", Addr: "a", State: true}).encode()}, true)
	if set, _, done := c.bootstrapSet(); set != nil || !done {
		t.Fatalf("a member has state, yet: %v %v", set, done)
	}
}
