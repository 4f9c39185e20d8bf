package cluster_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/cluster"
	"github.com/goblindb/goblin/internal/testutil"
)

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// Beyond MaxVoters nodes join as non-voters; when a voter leaves
// gracefully it is removed from the configuration and a non-voter is
// promoted in its place.
func TestNonVotersAndGracefulLeave(t *testing.T) {
	e := newEnv(t, 3)
	e.opts = func(c *cluster.Config) { c.MaxVoters = 3 }
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	e.start("n4", 0, "")
	e.waitFormed(3) // four nodes, three voters

	leaver := e.followers()[0].id
	e.leave(leaver)
	leader := e.waitFormed(3) // n4 promoted
	conf, err := leader.n.Configuration()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range conf {
		if s.ID == leaver {
			t.Fatalf("%s left but is still in the configuration", leaver)
		}
		if s.ID == "n4" && !s.Voter {
			t.Fatal("n4 was not promoted after a voter left")
		}
	}
	// The leader leaving hands over leadership first.
	e.leave(leader.id)
	e.waitFormed(2)
}

// A dead node is removed after ReapDeadAfter, or at once by GOBLIN REMOVE
// sent to any node.
func TestDeadNodeRemoval(t *testing.T) {
	e := newEnv(t, 4)
	e.opts = func(c *cluster.Config) { c.ReapDeadAfter = 2 * time.Second }
	e.startAll([]string{"n1", "n2", "n3", "n4"}, 4, nil)
	e.waitFormed(4)
	e.kill(e.followers()[0].id)
	e.waitFormed(3) // reaped

	// Without reaping, an operator removes the dead node.
	e2 := newEnv(t, 3)
	e2.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e2.waitFormed(3)
	fs := e2.followers()
	dead, asker := fs[0], fs[1]
	e2.kill(dead.id)
	if err := asker.rdb.Do(ctx(t), "GOBLIN", "REMOVE", dead.id).Err(); err != nil {
		t.Fatal(err)
	}
	e2.waitFormed(2)
	if err := asker.rdb.Do(ctx(t), "GOBLIN", "REMOVE", "nosuch").Err(); err == nil || !strings.Contains(err.Error(), "no such node") {
		t.Fatalf("removing an unknown node: %v", err)
	}
}

// Every node told to leave at once (docker-compose stop, a host shutting
// down) stops without shrinking the configuration or handing leadership
// around: no Leave fails or waits out its timeout for a quorum that is
// gone, and restarting any majority of the nodes brings the cluster and
// its data back.
func TestAllLeavingAtOnceKeepTheConfiguration(t *testing.T) {
	allLeaving(t, 0)
}

// The same with one node's stop a second behind the others' (a busy
// machine, a container stopped late): the first ones must not count it
// as staying and shrink the configuration around it, which would then
// need that node back (the two started again below could not elect a
// leader without it).
func TestAllLeavingWithALateOneKeepTheConfiguration(t *testing.T) {
	allLeaving(t, time.Second)
}

// allLeaving stops n1, n2 and n3 together, n3 late by late, then starts
// n1 and n2 again and checks that they resume the cluster, with three
// voters in its configuration and its data.
func allLeaving(t *testing.T, late time.Duration) {
	e := newEnv(t, 3)
	ids := []string{"n1", "n2", "n3"}
	e.startAll(ids, 3, nil)
	leader := e.waitFormed(3)
	if err := leader.rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	errs := make(chan error, len(ids))
	before := len(e.logs.String())
	for _, tn := range e.all() {
		dirs[tn.id] = tn.dir
		go func() {
			if tn.id == "n3" {
				time.Sleep(late)
			}
			if err := tn.c.Leave(10 * time.Second); err != nil {
				errs <- fmt.Errorf("%s leaving: %w", tn.id, err)
				return
			}
			errs <- nil
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, id := range ids {
		e.kill(id)
	}
	// A stop of the whole cluster is a normal course: nothing to warn
	// of, nothing to alert an operator. Nor is leadership handed from
	// one stopping node to another (the last ones standing may still
	// elect one of themselves before they stop).
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, "[ERROR]") || strings.Contains(line, "[WARN]") {
			t.Errorf("logged while the cluster stopped: %s", line)
		}
	}
	for _, line := range strings.Split(e.logs.String()[before:], "\n") {
		if strings.Contains(line, "handed leadership over") {
			t.Errorf("leadership handed over while the cluster stopped: %s", line)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// Two of the three come back: a majority of the configuration kept.
	e.startAll(ids[:2], 3, dirs)
	testutil.Poll(t, 30*time.Second, "a leader whose configuration still holds three voters", func() bool {
		leader = nil
		for _, tn := range e.all() {
			if tn.n.Ready() {
				leader = tn
			}
		}
		if leader == nil {
			return false
		}
		conf, err := leader.n.Configuration()
		voters := 0
		for _, s := range conf {
			if s.Voter {
				voters++
			}
		}
		return err == nil && voters == 3
	})
	if got, err := leader.rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("ZSCORE after the restart: %v, %v", got, err)
	}
}

// GOBLIN REMOVE naming the leader makes it step down, not stop: it is a
// live member, added back by the next leader, and counts as a working
// voter afterwards, so the cluster still survives the loss of another
// node.
func TestRemovingTheLeaderKeepsItWorking(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	leader := e.waitFormed(3)
	if err := leader.rdb.Do(ctx(t), "GOBLIN", "REMOVE", leader.id).Err(); err != nil {
		t.Fatal(err)
	}
	removed := leader.id
	e.waitFormed(3) // the removal was committed: it is a voter again
	for _, f := range e.followers() {
		if f.id != removed {
			e.kill(f.id)
			break
		}
	}
	// The dead node stays in the configuration: the two left are a
	// majority only if the removed leader votes and stores entries.
	var err error
	testutil.Poll(t, 30*time.Second, "a write with the removed leader and one other node", func() bool {
		err = e.node(removed).rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err()
		return err == nil
	})
	if got, err := e.node(removed).rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("ZSCORE on the removed leader: %v %v", got, err)
	}
}

// A node restarted on a dead node's Raft address under a new ID (its data
// directory wiped, another --id) replaces the dead one: Raft refuses two
// servers at one address, so it could never be added otherwise.
func TestNewIDOnADeadNodesAddressReplacesIt(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	dead := e.followers()[0].id
	e.kill(dead)
	e.mu.Lock()
	e.raft["n4"] = e.raft[dead]
	e.mu.Unlock()
	e.start("n4", 0, "")
	leader := e.waitFormed(3) // dead gone, n4 a voter
	if err := leader.rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := e.node("n4").rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("ZSCORE on n4: %v %v", got, err)
	}
}

// A node restarted at a new Raft address that wins an election before
// another leader has recorded the change records it itself: the others
// use the configuration's address to ask for its vote and to hand it
// leadership.
func TestLeaderRecordsItsOwnNewAddress(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	dirs := map[string]string{}
	for _, tn := range e.all() {
		dirs[tn.id] = tn.dir
		e.kill(tn.id)
	}
	// n1 comes back first, at a new address, and is campaigning when n2
	// comes: n1 wins most elections; otherwise both stop and it is tried
	// again.
	var addr string
	for try := 1; ; try++ {
		addr = testutil.FreeAddr(t, "")
		e.mu.Lock()
		e.raft["n1"] = addr
		e.mu.Unlock()
		e.start("n1", 0, dirs["n1"])
		time.Sleep(1500 * time.Millisecond)
		e.start("n2", 0, dirs["n2"])
		var leader string
		testutil.Poll(t, 20*time.Second, "a leader", func() bool {
			for _, tn := range e.all() {
				if tn.n.IsLeader() {
					leader = tn.id
				}
			}
			return leader != ""
		})
		if leader == "n1" {
			break
		}
		if try == 6 {
			t.Fatalf("n2 won the election %d times in a row", try)
		}
		t.Logf("try %d: n2 leads; again", try)
		e.kill("n1")
		e.kill("n2")
	}
	n1 := e.node("n1")
	testutil.Poll(t, 10*time.Second, "the leader's own entry to show its new address", func() bool {
		conf, err := n1.n.Configuration()
		if err != nil {
			return false
		}
		for _, s := range conf {
			if s.ID == "n1" {
				return s.Addr == addr
			}
		}
		return false
	})
	e.start("n3", 0, dirs["n3"])
	e.waitFormed(3)
	// Leadership goes to n2 and back: handing it to n1 uses its address.
	if err := n1.n.TransferLeadership("n2"); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "n2 to lead", func() bool { return e.node("n2").n.IsLeader() })
	if err := e.node("n2").n.TransferLeadership("n1"); err != nil {
		t.Fatalf("handing leadership back to n1: %v", err)
	}
	testutil.Poll(t, 10*time.Second, "n1 to lead again", func() bool { return n1.n.IsLeader() })
}

// Every node comes back at a new Raft address (a cluster's containers
// recreated on a new network): the configuration holds only the old
// ones, which no node listens on, yet the nodes elect a leader, reaching
// each other at the addresses they gossip, and the leader records the
// new ones.
func TestAllNodesBackAtNewAddresses(t *testing.T) {
	if raceEnabled {
		// hashicorp/raft v1.8 reads a follower's peer record without its
		// lock (updateLastAppended) while a configuration change updates
		// the peer's address (startStopReplication): the ID it reads is
		// unchanged, but the detector reports it. test.sh runs this test
		// without the detector.
		t.Skip("hashicorp/raft races when a voter's address changes; run without -race")
	}
	leader := backAtNewAddresses(t, func(ids []string, raft, gossip map[string]string) {
		for _, id := range ids {
			raft[id] = testutil.FreeAddr(t, "")
		}
	})
	if got, err := leader.rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("ZSCORE after the move: %v, %v", got, err)
	}
}

// The nodes come back at each other's addresses (a cluster's containers
// started again, handed the same IPs in another order): every new
// address is one the configuration gives another node, so no address can
// be recorded as it stands, and a request sent to the configuration's
// address reaches the wrong node. The leader moves the addresses round
// and the configuration ends up with every node's own.
func TestNodesBackAtEachOthersAddresses(t *testing.T) {
	if raceEnabled { // as TestAllNodesBackAtNewAddresses
		t.Skip("hashicorp/raft races when a voter's address changes; run without -race")
	}
	leader := backAtNewAddresses(t, func(ids []string, raft, gossip map[string]string) {
		// n1 takes n2's addresses, n2 n3's and n3 n1's.
		oldRaft, oldGossip := maps.Clone(raft), maps.Clone(gossip)
		for i, id := range ids {
			next := ids[(i+1)%len(ids)]
			raft[id], gossip[id] = oldRaft[next], oldGossip[next]
		}
	})
	if got, err := leader.rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("ZSCORE after the move: %v, %v", got, err)
	}
	if err := leader.rdb.ZAdd(ctx(t), "k", redisZ(2, "b")).Err(); err != nil {
		t.Fatal(err)
	}
}

// backAtNewAddresses forms a cluster of three holding k = {a: 1}, stops
// every node, starts them again at the addresses move sets (Raft and
// gossip, by node ID) and returns the leader once its configuration holds
// every node's new Raft address.
func backAtNewAddresses(t *testing.T, move func(ids []string, raft, gossip map[string]string)) *tnode {
	e := newEnv(t, 3)
	ids := []string{"n1", "n2", "n3"}
	e.startAll(ids, 3, nil)
	leader := e.waitFormed(3)
	if err := leader.rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, tn := range e.all() {
		dirs[tn.id] = tn.dir
		e.kill(tn.id)
	}
	e.mu.Lock()
	move(ids, e.raft, e.gossip)
	addrs := maps.Clone(e.raft)
	e.mu.Unlock()
	e.startAll(ids, 3, dirs)
	e.waitFormed(3)
	testutil.Poll(t, 20*time.Second, "a leader whose configuration holds the new addresses", func() bool {
		for _, tn := range e.all() {
			if !tn.n.IsLeader() {
				continue
			}
			conf, err := tn.n.Configuration()
			if err != nil {
				return false
			}
			for _, s := range conf {
				if s.Addr != addrs[s.ID] {
					return false
				}
			}
			leader = tn
			return true
		}
		return false
	})
	return leader
}

// A node restarted at the address the configuration gives another, down,
// node reaches itself when Raft asks that node for its vote: it must not
// answer as that node. Counting its own vote twice, it won elections
// alone, one node of three, and with the log it had when it stopped:
// leading, it would have replaced the writes the others acknowledged
// since.
func TestNodeAtADownNodesAddressDoesNotVoteForItselfTwice(t *testing.T) {
	e := newEnv(t, 3)
	ids := []string{"n1", "n2", "n3"}
	e.startAll(ids, 3, nil)
	e.waitFormed(3)
	dirs := map[string]string{}
	for _, tn := range e.all() {
		dirs[tn.id] = tn.dir
	}
	e.kill("n1")
	var leader *tnode
	testutil.Poll(t, 20*time.Second, "a leader of n2 and n3", func() bool {
		for _, id := range ids[1:] {
			if tn := e.node(id); tn.n.IsLeader() {
				leader = tn
			}
		}
		return leader != nil
	})
	if err := leader.rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err(); err != nil {
		t.Fatal(err)
	}
	e.kill("n2")
	e.kill("n3")
	e.mu.Lock()
	e.raft["n1"] = e.raft["n3"]
	e.mu.Unlock()
	n1 := e.start("n1", 0, dirs["n1"])
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n1.n.IsLeader() {
			t.Fatal("n1 alone, at n3's address, became leader")
		}
	}
	e.start("n2", 0, dirs["n2"])
	leader = nil
	testutil.Poll(t, 20*time.Second, "a leader of n1 and n2", func() bool {
		for _, id := range ids[:2] {
			if tn := e.node(id); tn.n.Ready() {
				leader = tn
			}
		}
		return leader != nil
	})
	if got, err := leader.rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || got != 1 {
		t.Fatalf("ZSCORE of the write n2 and n3 acknowledged: %v, %v", got, err)
	}
}

// A node of a build that cannot apply the cluster's log (it gossips no
// group entry support) is not added, with one warning, while a node of
// this build that comes up beside it is.
func TestOlderBuildIsNotAdded(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	leader := e.waitFormed(3)
	e.opts = func(c *cluster.Config) { cluster.OldBuild(c, 2) }
	e.start("n4", 0, "")
	e.opts = nil
	e.start("n5", 0, "")
	ids := map[string]bool{}
	inConf := func() bool {
		conf, err := leader.n.Configuration()
		if err != nil {
			t.Fatal(err)
		}
		clear(ids)
		for _, s := range conf {
			ids[s.ID] = true
		}
		return ids["n5"]
	}
	testutil.Poll(t, 30*time.Second, "n5 to be added", inConf)
	// Many reconcile ticks (100 ms) after n5 was added.
	time.Sleep(2 * time.Second)
	inConf()
	if ids["n4"] || !ids["n5"] {
		t.Fatalf("configuration holds %v: want n5 added and n4 (older build) not", ids)
	}
	if got := strings.Count(e.logs.String(), "not adding a node: it runs an older build"); got != 1 {
		t.Fatalf("the older build was warned of %d times, want once:\n%s", got, e.logs.String())
	}
}
