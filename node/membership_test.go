package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/raft"
)

// A node added after the log was compacted catches up by snapshot install,
// and serves linearizable reads at once: restoring the snapshot marks its
// index applied.
func TestNewNodeCatchesUpBySnapshot(t *testing.T) {
	tc := newTestCluster(t, 3, func(c *Config) { c.SnapshotThreshold = 16 })
	leader := tc.waitLeader()
	for i := 1; i <= 100; i++ {
		if _, err := leader.Apply(zaddEntry("k", fmt.Sprint("m", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	// Two snapshots: the log keeps what the older one needs.
	for i := 101; i <= 200; i++ {
		if err := leader.Raft().Snapshot().Error(); err != nil {
			t.Fatal(err)
		}
		if _, err := leader.Apply(zaddEntry("k", fmt.Sprint("m", i), i)); err != nil {
			t.Fatal(err)
		}
		if first, _ := leader.stores.guard.FirstIndex(); first > 1 {
			break
		}
	}
	first, _ := leader.stores.guard.FirstIndex()
	if first <= 1 {
		t.Fatalf("log not compacted (first index %d)", first)
	}
	n4 := tc.start("n4", tc.dir())
	if err := leader.AddVoter("n4", "raft-n4"); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "n4 to install a snapshot", func() bool { return n4.AppliedIndex() >= first })
	if err := n4.ReadBarrier(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		if got := score(n4, "k", fmt.Sprint("m", i)); got != fmt.Sprint(i) {
			t.Fatalf("n4: m%d has score %q", i, got)
		}
	}
	if !n4.HasState() {
		t.Fatal("n4 reports no Raft state after catching up")
	}
}

// A single voter skips leadership confirmation for reads; adding a voter
// must end that before the new voter can help elect anyone else.
func TestAddingAVoterEndsSingleVoterReads(t *testing.T) {
	tc := newTestCluster(t, 1, nil)
	leader := tc.waitLeader()
	testutil.Poll(t, 5*time.Second, "single-voter mode", func() bool { return leader.singleVoter.Load() })
	tc.start("n2", tc.dir())
	if err := leader.AddVoter("n2", "raft-n2"); err != nil {
		t.Fatal(err)
	}
	if leader.singleVoter.Load() {
		t.Fatal("still in single-voter mode with two voters")
	}
	if err := leader.RemoveServer("n2"); err != nil {
		t.Fatal(err)
	}
	if !leader.singleVoter.Load() {
		t.Fatal("not back in single-voter mode after the second voter left")
	}
}

// Membership changes asked of a follower are carried out by the leader.
func TestRemoveAndTransferFromAFollower(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	fs := tc.followers()
	if err := fs[0].RemoveServer("nope"); !errors.Is(err, ErrNoSuchNode) {
		t.Fatalf("removing an unknown node: %v", err)
	}
	if err := fs[0].TransferLeadership(fs[1].ID()); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, fs[1].ID()+" to lead", func() bool { return fs[1].Ready() })
	if err := fs[0].RemoveServer(fs[0].ID()); err != nil {
		t.Fatal(err)
	}
	conf, err := fs[1].Configuration()
	if err != nil {
		t.Fatal(err)
	}
	if len(conf) != 2 || hasServer(conf, fs[0].ID()) {
		t.Fatalf("configuration after removing %s: %+v", fs[0].ID(), conf)
	}
}

// HasState is false until a node is bootstrapped or contacted by a leader,
// and BootstrapCluster refuses a node with state.
func TestBootstrapRefusesANodeWithState(t *testing.T) {
	tc := newTestCluster(t, 1, nil)
	fresh := tc.start("n2", tc.dir())
	if fresh.HasState() {
		t.Fatal("a fresh node reports state")
	}
	leader := tc.node("n1")
	if err := leader.BootstrapCluster([]Server{{ID: "n1", Addr: "raft-n1", Voter: true}}); !errors.Is(err, raft.ErrCantBootstrap) {
		t.Fatalf("bootstrapping a node with state: %v", err)
	}
	if err := leader.AddVoter("n2", "raft-n2"); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 5*time.Second, "n2 to have state", fresh.HasState)
}
