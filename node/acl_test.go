package node

import (
	"errors"
	"testing"
	"time"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

// An ACL change proposed on a follower is forwarded, validated by the
// leader, and applied on every node; one that is not valid is refused
// before it reaches the log.
func TestACLChangeReplicates(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	f := tc.followers()[0]
	e := &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: "alice", Rules: acl.HashRules([]string{"on", ">pw", "~*", "+@all"})}}}}
	res, err := f.Apply(e)
	if err != nil || string(res.Reply) != "+OK\r\n" {
		t.Fatalf("SETUSER through %s: %q, %v", f.ID(), res.Reply, err)
	}
	for _, n := range tc.all() {
		testutil.Poll(t, 10*time.Second, n.ID()+" to have alice", func() bool {
			u := n.FSM().Applier().ACLUsers().Get("alice")
			return u != nil && u.CheckPassword([]byte("pw"))
		})
	}
	bad := &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLSetUser}}
	leader := tc.waitLeader()
	wait, _ := leader.ApplyForwarded(bad.Encode(nil))
	if _, err := wait(); !errors.Is(err, ErrBadEntry) {
		t.Fatalf("an ACL entry without a user: %v", err)
	}
}
