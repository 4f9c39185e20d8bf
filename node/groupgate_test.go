package node

import (
	"fmt"
	"testing"

	"github.com/goblindb/goblin/raftfsm"
)

// The leader writes a batch as one group entry only while every server
// says it applies groups: with one server of an older build (a rolling
// upgrade), every proposal is a log entry of its own, which that build
// applies; once it is upgraded, batches are groups again. Every node ends
// in the same state either way.
func TestGroupGateWaitsForEveryServer(t *testing.T) {
	tc := newTestCluster(t, 3, func(c *Config) { c.Fsync = FsyncAlways })
	leader := tc.waitLeader()
	old := tc.followers()[0]
	// logged proposes count pipelined ZINCRBYs through the leader and
	// returns how many log entries they took.
	total := 0
	logged := func(count int) uint64 {
		t.Helper()
		before := leader.raft.LastIndex()
		waits := make([]func() (raftfsm.Result, error), 0, count)
		for i := 0; i < count; i++ {
			waits = append(waits, leader.Propose(raftfsm.CommandEntry(leader.Now(), 0, "zincrby", "k", "1", "m")))
		}
		for i, w := range waits {
			if _, err := w(); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		total += count
		return leader.raft.LastIndex() - before
	}

	tc.mu.Lock()
	tc.oldBuild = map[string]bool{old.ID(): true}
	tc.mu.Unlock()
	leader.updateGroupGate()
	if got := logged(300); got < 300 {
		t.Fatalf("with %s of an older build, 300 writes took %d log entries: groups were written", old.ID(), got)
	}

	tc.mu.Lock()
	tc.oldBuild = nil
	tc.mu.Unlock()
	leader.updateGroupGate()
	if got := logged(300); got >= 300 {
		t.Fatalf("with every server upgraded, 300 writes took %d log entries: no groups", got)
	}

	want := fmt.Sprint(total)
	for _, n := range tc.all() {
		if err := n.WaitApplied(t.Context(), leader.raft.LastIndex()); err != nil {
			t.Fatalf("%s: %v", n.ID(), err)
		}
		if got := score(n, "k", "m"); got != want {
			t.Errorf("%s: score %s, want %s", n.ID(), got, want)
		}
	}
}

// Under --fsync everysec too a batch goes to Raft as one group entry.
func TestGroupsUnderEverysec(t *testing.T) {
	n := startNode(t, Config{Fsync: FsyncEverysec})
	before := n.raft.LastIndex()
	waits := make([]func() (raftfsm.Result, error), 0, 300)
	for i := 0; i < 300; i++ {
		waits = append(waits, n.Propose(raftfsm.CommandEntry(n.Now(), 0, "zincrby", "k", "1", "m")))
	}
	for i, w := range waits {
		if _, err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got := n.raft.LastIndex() - before; got >= 300 {
		t.Fatalf("300 writes took %d log entries under everysec: no groups were written", got)
	}
	if got := score(n, "k", "m"); got != "300" {
		t.Fatalf("score %s after 300 ZINCRBY 1, want 300", got)
	}
	if _, _, largest := n.GroupCommitStats(); largest < 2 {
		t.Fatalf("no batch held more than one entry: the test proves nothing")
	}
}
