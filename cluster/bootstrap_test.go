package cluster_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/cluster"
	"github.com/goblindb/goblin/internal/testutil"
)

// startAll starts ids concurrently, each after a random delay.
func (e *env) startAll(ids []string, expect int, dirs map[string]string) {
	delays := make([]time.Duration, len(ids))
	for i := range ids {
		delays[i] = time.Duration(e.rng.IntN(400)) * time.Millisecond
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delays[i])
			e.start(id, expect, dirs[id])
		}()
	}
	wg.Wait()
}

// Three nodes started in any order, with any timing, form one cluster
// with exactly one bootstrap; restarting them all bootstraps nothing.
func TestBootstrapRaceAndRestart(t *testing.T) {
	for trial := range 3 {
		t.Run(fmt.Sprint("trial", trial), func(t *testing.T) {
			e := newEnv(t, 3)
			ids := []string{"n1", "n2", "n3"}
			e.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			t.Logf("start order %v", ids)
			e.startAll(ids, 3, nil)
			e.waitFormed(3)
			if b := e.boots.Load(); b != 1 {
				t.Fatalf("%d bootstraps, want 1", b)
			}

			dirs := map[string]string{}
			for _, tn := range e.all() {
				dirs[tn.id] = tn.dir
				e.kill(tn.id)
			}
			e.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			t.Logf("restart order %v", ids)
			e.startAll(ids, 3, dirs)
			e.waitFormed(3)
			if b := e.boots.Load(); b != 1 {
				t.Fatalf("%d bootstraps after a restart, want still 1", b)
			}
		})
	}
}

// More nodes than expected start at once: still one bootstrap, and the
// leader adds the rest (voters up to MaxVoters).
func TestBootstrapWithMoreNodesThanExpected(t *testing.T) {
	e := newEnv(t, 5)
	e.startAll([]string{"n1", "n2", "n3", "n4", "n5"}, 3, nil)
	e.waitFormed(5)
	if b := e.boots.Load(); b != 1 {
		t.Fatalf("%d bootstraps, want 1", b)
	}
}

// A node that starts late, with bootstrap-expect like the others, joins
// the existing cluster instead of bootstrapping another; one started with
// only --join does too.
func TestLateNodesJoin(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	e.start("n0", 3, "") // lowest ID, same expect: must not bootstrap
	e.start("n4", 0, "")
	e.waitFormed(5)
	if b := e.boots.Load(); b != 1 {
		t.Fatalf("%d bootstraps, want 1", b)
	}
}

// A node whose data is lost (a fresh volume) rejoins under its old ID
// without bootstrapping.
func TestNodeWithLostDataRejoins(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	leader := e.waitFormed(3)
	victim := e.followers()[0].id
	if _, err := leader.rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Result(); err != nil {
		t.Fatal(err)
	}
	e.kill(victim)
	e.start(victim, 3, "")
	e.waitFormed(3)
	if b := e.boots.Load(); b != 1 {
		t.Fatalf("%d bootstraps, want 1", b)
	}
	if got, err := e.node(victim).rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("rejoined node reads %v, %v", got, err)
	}
}

// A cluster's first start is Raft's normal course: its first election,
// and followers with empty logs brought up to date; so are a node's
// leaving and its return. None of it is a warning; an operator reading
// the logs finds none.
func TestClusterFormsWithoutWarning(t *testing.T) {
	e := newEnv(t, 3)
	// Gossip with its production timings: the tests' fast probes (an ack
	// within 200 ms) time out on a loaded machine and log a suspicion,
	// which is memberlist reporting a slow peer, not cluster formation.
	e.opts = func(c *cluster.Config) { c.Memberlist = nil }
	for _, id := range []string{"n1", "n2", "n3"} {
		e.start(id, 3, "")
	}
	leader := e.waitFormed(3)
	write := func(member string) {
		t.Helper()
		if err := leader.rdb.ZAdd(ctx(t), "k", redis.Z{Score: 1, Member: member}).Err(); err != nil {
			t.Fatal(err)
		}
		for _, tn := range e.all() {
			testutil.Poll(t, 10*time.Second, "the write applied on "+tn.id, func() bool { return tn.n.AppliedIndex() >= leader.n.AppliedIndex() })
		}
	}
	write("a")
	var follower *tnode
	for _, tn := range e.followers() {
		follower = tn
	}
	e.leave(follower.id)
	write("b")
	e.start(follower.id, 3, follower.dir)
	leader = e.waitFormed(3)
	write("c")
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, "[WARN]") || strings.Contains(line, "[ERROR]") {
			t.Errorf("logged: %s", line)
		}
	}
}
