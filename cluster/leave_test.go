package cluster

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/node"
)

// cutOffNode is a follower whose removal request waits for an answer that
// never comes (its leader is unreachable), and which knows a leader only
// until leaderUntil.
type cutOffNode struct {
	fuzzNode
	mu          sync.Mutex
	leaderUntil time.Time
	conf        []node.Server
}

func (n *cutOffNode) IsLeader() bool { return false }
func (n *cutOffNode) LeaderID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if time.Now().Before(n.leaderUntil) {
		return "n2"
	}
	return ""
}
func (n *cutOffNode) Configuration() ([]node.Server, error) { return n.conf, nil }
func (n *cutOffNode) RemoveServer(string) error             { select {} }

// A leaving node cut off from the rest, whose peers gossip still shows
// alive, gives up asking to be removed once it has known no leader for
// leaveLeaderlessWait, instead of waiting out Leave's whole timeout.
func TestRemoveSelfGivesUpWithoutLeader(t *testing.T) {
	conf := []node.Server{{ID: "n1", Voter: true, Current: true}, {ID: "n2", Voter: true}, {ID: "n3", Voter: true}}
	for _, known := range []time.Duration{0, time.Second} {
		fn := &cutOffNode{conf: conf, leaderUntil: time.Now().Add(known)}
		c := &Cluster{cfg: Config{ID: "n1"}, node: fn, log: hclog.NewNullLogger(),
			members: map[string]*member{"n2": {state: "alive"}, "n3": {state: "alive"}}}
		start := time.Now()
		err := c.removeSelf(conf, start.Add(30*time.Second))
		took := time.Since(start)
		if !errors.Is(err, errLeaderless) {
			t.Fatalf("leader known for %v: removeSelf = %v after %v, want errLeaderless", known, err, took)
		}
		// The wait counts from when the leader was last seen known (the
		// node is sampled every 100 ms).
		if took < known+leaveLeaderlessWait-500*time.Millisecond || took > known+leaveLeaderlessWait+3*time.Second {
			t.Fatalf("leader known for %v: gave up after %v, want about %v", known, took, known+leaveLeaderlessWait)
		}
	}
}
