package cluster

import (
	"testing"

	"github.com/goblindb/goblin/node"
)

// A node removed before a new leader's first reconcile (killed, then
// GOBLIN REMOVE right after the election, while gossip still counts it
// alive) must prove its identity again before it is added back: the first
// reconcile forgets every identity check, later ones those of the nodes
// that left the configuration since the one before.
func TestReconcileForgetsIdentityChecksOfRemovedNodes(t *testing.T) {
	c := &Cluster{verified: map[string]string{"n2": "127.0.0.1:2", "n3": "127.0.0.1:3"}}
	conf := map[string]node.Server{"n1": {ID: "n1"}, "n3": {ID: "n3"}}
	c.noteRemovals(conf) // a leadership's first reconcile: n2 already gone
	if addr, ok := c.verified["n2"]; ok {
		t.Fatalf("n2, removed before the first reconcile, keeps its identity check (%s)", addr)
	}
	c.verified["n3"] = "127.0.0.1:3"
	c.noteRemovals(map[string]node.Server{"n1": {ID: "n1"}}) // n3 removed since
	if _, ok := c.verified["n3"]; ok {
		t.Fatal("n3, removed since the last reconcile, keeps its identity check")
	}
	c.verified["n1"] = "127.0.0.1:1"
	c.noteRemovals(map[string]node.Server{"n1": {ID: "n1"}}) // nothing removed
	if _, ok := c.verified["n1"]; !ok {
		t.Fatal("n1, still in the configuration, lost its identity check")
	}
}
