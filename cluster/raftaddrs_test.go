package cluster

import (
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"
)

// Raft reaches a server at the address it gossips, else at the one the
// configuration gave it, else at the one it last gossiped, named with the
// server's ID unless gossip shows the server is of a build whose listener
// does not take the name.
func TestRaftAddrsNameTheTarget(t *testing.T) {
	c, _ := newClaimTest(t) // n1, n3, n0 alive at Raft address "r"
	c.observe(&memberlist.Node{Name: "old", Meta: (&Meta{ID: "old", Raft: "10.0.0.9:16379", Addr: "a"}).encode()}, true)
	c.observe(&memberlist.Node{Name: "new", Meta: (&Meta{ID: "new", Raft: "10.0.0.8:16379", Addr: "a", Plane: planeTargets}).encode()}, true)
	c.observe(&memberlist.Node{Name: "gone", Meta: (&Meta{ID: "gone", Raft: "10.0.0.7:16379", Addr: "a", Plane: planeTargets}).encode()}, false)
	c.observe(&memberlist.Node{Name: "left", Meta: (&Meta{ID: "left", Raft: "10.0.0.4:16379", Addr: "a", Plane: planeTargets}).encode()}, false)
	conf := map[string]string{"gone": "10.0.0.6:16379", "unseen": "10.0.0.5:16379"}
	c.addrs.conf.Store(&conf)
	for _, tc := range []struct {
		id, want string
	}{
		{"n2", c.cfg.RaftAddr}, // this node: as it is, for Raft's own headers
		{"new", "10.0.0.8:16379#new"},
		{"old", "10.0.0.9:16379"},
		{"gone", "10.0.0.6:16379#gone"},
		{"unseen", "10.0.0.5:16379#unseen"},
		{"left", "10.0.0.4:16379#left"}, // gone from both: where gossip last had it
	} {
		got, err := c.addrs.ServerAddr(raft.ServerID(tc.id))
		if err != nil || string(got) != tc.want {
			t.Errorf("ServerAddr(%s) = %q, %v; want %q", tc.id, got, err, tc.want)
		}
	}
	if got, err := c.addrs.ServerAddr("nowhere"); err == nil {
		t.Errorf("ServerAddr of a server neither gossip nor the configuration knows: %q", got)
	}
	if hostPort, to := splitTarget("10.0.0.8:16379#new"); hostPort != "10.0.0.8:16379" || to != "new" {
		t.Errorf("splitTarget: %q %q", hostPort, to)
	}
	if hostPort, to := splitTarget("10.0.0.9:16379"); hostPort != "10.0.0.9:16379" || to != "" {
		t.Errorf("splitTarget of an untagged address: %q %q", hostPort, to)
	}
}
