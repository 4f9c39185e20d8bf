package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// Three processes started in any order form one cluster; a write through
// a follower is readable on every node, and ZRANK/ZRANGE are served by
// the followers.
func TestClusterWriteAnywhereReadEverywhere(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	fs := Followers(nodes, leader)

	for i, n := range nodes {
		if err := n.Client().ZAdd(ctx, "lb", redis.Z{Score: float64(i + 1), Member: n.ID}).Err(); err != nil {
			t.Fatalf("ZADD through %s: %v", n.ID, err)
		}
	}
	for _, n := range nodes {
		got, err := n.Client().ZRange(ctx, "lb", 0, -1).Result()
		if err != nil || strings.Join(got, ",") != "n1,n2,n3" {
			t.Fatalf("ZRANGE on %s: %v %v", n.ID, got, err)
		}
		rank, err := n.Client().ZRank(ctx, "lb", "n3").Result()
		if err != nil || rank != 2 {
			t.Fatalf("ZRANK on %s: %v %v", n.ID, rank, err)
		}
	}
	for _, f := range fs {
		if calls := commandCalls(t, f.Client()); calls["zrank"] == 0 || calls["zrange"] == 0 {
			t.Fatalf("follower %s served no ZRANK/ZRANGE: %v", f.ID, calls)
		}
	}
}

// go-redis's ClusterClient with ReadOnly sends rank reads to the followers
// (CLUSTER SLOTS shows them as replicas) and writes to the leader.
func TestClusterClientReadOnlyRoutesReadsToFollowers(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.Addr)
	}
	waitClusterSlots(t, nodes, leader)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadOnly: true})
	defer cc.Close()
	before := map[string]map[string]int{}
	for _, n := range nodes {
		before[n.ID] = commandCalls(t, n.Client())
	}
	for i := 0; i < 50; i++ {
		if err := cc.ZAdd(ctx, "board", redis.Z{Score: float64(i), Member: fmt.Sprint("p", i)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// READONLY reads on a replica are local, like Redis's: let the
	// followers apply the writes first.
	waitCaughtUp(t, nodes, leader)
	for i := 0; i < 200; i++ {
		rank, err := cc.ZRank(ctx, "board", fmt.Sprint("p", i%50)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if rank != int64(i%50) {
			t.Fatalf("ZRANK p%d = %d", i%50, rank)
		}
	}
	var report []string
	followerRanks := 0
	for _, n := range nodes {
		after := commandCalls(t, n.Client())
		zrank := after["zrank"] - before[n.ID]["zrank"]
		zadd := after["zadd"] - before[n.ID]["zadd"]
		report = append(report, fmt.Sprintf("%s(leader=%v): zadd %d zrank %d", n.ID, n == leader, zadd, zrank))
		if n == leader {
			if zadd != 50 {
				t.Errorf("leader executed %d of 50 ZADDs", zadd)
			}
			continue
		}
		followerRanks += zrank
		if zadd != 0 {
			t.Errorf("follower %s received %d ZADDs from a cluster client", n.ID, zadd)
		}
	}
	t.Logf("per-node command stats: %s", strings.Join(report, "; "))
	if followerRanks != 200 {
		t.Fatalf("followers served %d of 200 ZRANKs", followerRanks)
	}
}

// kill -9 of the leader: a new leader serves writes within a few seconds,
// no acknowledged write is missing, and the old node catches up when it
// comes back.
func TestClusterKillLeader(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)

	// Writers on every follower keep writing through the kill.
	var (
		mu    sync.Mutex
		acked []string
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for _, f := range Followers(nodes, leader) {
		c := f.Client(patient)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m := fmt.Sprintf("%s-%d", f.ID, i)
				if err := c.ZAdd(ctx, "acked", redis.Z{Score: 1, Member: m}).Err(); err == nil {
					mu.Lock()
					acked = append(acked, m)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	survivor := Followers(nodes, leader)[0].Client(patient)
	if err := survivor.ZAdd(ctx, "probe", redis.Z{Score: 1, Member: "before"}).Err(); err != nil {
		t.Fatal(err)
	}
	leader.Kill()
	killed := time.Now()
	// The first write issued after the kill waits out the election.
	var failover time.Duration
	for {
		err := survivor.ZAdd(ctx, "probe", redis.Z{Score: 2, Member: "after"}).Err()
		if err == nil {
			failover = time.Since(killed)
			break
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("no write succeeded within 30 s of killing the leader: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("failover: first write after kill -9 of the leader acknowledged after %v", failover)
	// A generous bound: the promise is "within a few seconds" (5 s), and
	// this machine is shared; the measured time is logged above.
	if failover > 10*time.Second {
		t.Errorf("failover took %v", failover)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	newLeader := WaitLeader(t, nodes, 30*time.Second)
	if newLeader == leader {
		t.Fatal("the killed node is still the leader")
	}
	checkAcked := func(n *ClusterNode) {
		t.Helper()
		have, err := n.Client().ZRange(ctx, "acked", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, m := range have {
			set[m] = true
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range acked {
			if !set[m] {
				t.Fatalf("%s: acknowledged write %s is missing (%d acknowledged, %d present)", n.ID, m, len(acked), len(have))
			}
		}
	}
	for _, n := range Followers(nodes, nil) {
		checkAcked(n)
	}
	t.Logf("%d writes acknowledged around the kill, all present", len(acked))

	// The old leader restarts and catches up, as a follower.
	leader.Restart()
	WaitLeader(t, nodes, 30*time.Second)
	ro := leader.Client(func(o *redis.Options) {
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }
	})
	testutil.Eventually(t, 20*time.Second, func() error {
		s, err := ro.ZScore(ctx, "probe", "after").Result()
		if err != nil || s != 2 {
			return fmt.Errorf("restarted node reads probe/after = %v, %v", s, err)
		}
		return nil
	})
	checkAcked(leader)
}

// A 5-node cluster loses two nodes (the leader among them) and keeps
// serving writes and reads.
func TestFiveNodesLoseTwo(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 5})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	fs := Followers(nodes, leader)
	victim := fs[rng.IntN(len(fs))]
	leader.Kill()
	victim.Kill()
	t.Logf("killed %s (leader) and %s", leader.ID, victim.ID)
	var live []*ClusterNode
	for _, n := range nodes {
		if n.Running() {
			live = append(live, n)
		}
	}
	for i, n := range live {
		if err := n.Client(patient).ZAdd(ctx, "five", redis.Z{Score: float64(i), Member: n.ID}).Err(); err != nil {
			t.Fatalf("ZADD through %s after losing two nodes: %v", n.ID, err)
		}
	}
	want := []string{live[0].ID, live[1].ID, live[2].ID}
	for _, n := range live {
		got, err := n.Client().ZRange(ctx, "five", 0, -1).Result()
		if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("ZRANGE on %s: %v %v, want %v", n.ID, got, err, want)
		}
	}
}

// A node that stops gracefully (SIGTERM) leaves: it is removed from the
// configuration, so the remaining two keep a majority of a two-voter
// configuration; when it comes back it is added again.
func TestClusterGracefulLeave(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Leave: true})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	leaver := leader // a leader hands over leadership first
	leaver.Stop()
	if code := leaver.ExitCode(); code != 0 {
		t.Fatalf("goblind exited with %d on SIGTERM", code)
	}
	rest := Followers(nodes, leaver)
	newLeader := WaitLeader(t, nodes, 30*time.Second)
	testutil.Eventually(t, 10*time.Second, func() error {
		members, err := GoblinNodes(ctx, newLeader.Client())
		if err != nil {
			return err
		}
		for _, m := range members {
			if m["id"] == leaver.ID && (m["suffrage"] != "none" || m["role"] != "left") {
				return fmt.Errorf("%s still in the configuration, or not shown as left: %v", leaver.ID, m)
			}
		}
		return nil
	})
	// One more loss would now leave one of two voters: no quorum. So the
	// cluster of two serves only while both are up; check it does.
	if err := rest[0].Client(patient).ZAdd(ctx, "k", redis.Z{Score: 1, Member: "m"}).Err(); err != nil {
		t.Fatal(err)
	}
	leaver.Restart()
	WaitLeader(t, nodes, 30*time.Second)
	testutil.Eventually(t, 10*time.Second, func() error {
		members, err := GoblinNodes(ctx, newLeader.Client())
		if err != nil {
			return err
		}
		var voters []string
		for _, m := range members {
			if m["suffrage"] == "voter" {
				voters = append(voters, m["id"])
			}
		}
		sort.Strings(voters)
		if strings.Join(voters, ",") != "n1,n2,n3" {
			return fmt.Errorf("voters %v", voters)
		}
		return nil
	})
}

// A follower that misses many entries while down catches up by snapshot
// install (the leader compacted its log meanwhile).
func TestClusterSnapshotCatchUp(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Args: []string{"--snapshot-threshold", "64", "--snapshot-interval", "200ms", "--fsync", "everysec"}})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	lagger := Followers(nodes, leader)[0]
	lagger.Kill()
	c := leader.Client()
	// 200 pipelines of 10: a pipeline's writes share one log entry, and
	// the snapshot needs --snapshot-threshold entries.
	for j := 0; j < 200; j++ {
		pipe := c.Pipeline()
		for i := j * 10; i < (j+1)*10; i++ {
			pipe.ZAdd(ctx, fmt.Sprint("s", i%10), redis.Z{Score: float64(i), Member: fmt.Sprint("m", i)})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	compactLog(t, leader)
	lagger.Restart()
	testutil.Eventually(t, 30*time.Second, func() error {
		n, err := lagger.Client().ZCard(ctx, "s7").Result()
		if err != nil || n != 200 {
			return fmt.Errorf("restarted follower: ZCARD s7 = %v, %v", n, err)
		}
		return nil
	})
	if raftStat(t, lagger, "last_snapshot_index") == "0" {
		t.Fatal("the follower caught up without installing a snapshot")
	}
}

// raftStat returns one of GOBLIN RAFTSTATS's values.
func raftStat(t testing.TB, n *ClusterNode, key string) string {
	t.Helper()
	stats, err := n.Client(func(o *redis.Options) { o.Protocol = 2 }).Do(context.Background(), "GOBLIN", "RAFTSTATS").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(stats); i += 2 {
		if stats[i] == key {
			return stats[i+1]
		}
	}
	t.Fatalf("no %s in GOBLIN RAFTSTATS", key)
	return ""
}

// waitCaughtUp waits until every running follower has applied the
// leader's commit index.
func waitCaughtUp(t testing.TB, nodes []*ClusterNode, leader *ClusterNode) {
	t.Helper()
	ctx := context.Background()
	info, err := Info(ctx, leader.Client(), "replication")
	if err != nil {
		t.Fatal(err)
	}
	commit, _ := strconv.ParseUint(info["goblin_commit_index"], 10, 64)
	for _, f := range Followers(nodes, leader) {
		testutil.Eventually(t, 10*time.Second, func() error {
			fi, err := Info(ctx, f.Client(), "replication")
			if err != nil {
				return err
			}
			if applied, _ := strconv.ParseUint(fi["goblin_applied_index"], 10, 64); applied < commit {
				return fmt.Errorf("%s applied %d of %d", f.ID, applied, commit)
			}
			return nil
		})
	}
}
