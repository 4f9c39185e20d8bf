package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// Any node accepts any command: writes, pipelines and MULTI/EXEC through a
// follower are forwarded to the leader, and the follower answers once the
// leader has applied them; the same connection's reads wait until the
// follower has too, so it reads its own writes at once, even with READONLY
// (local reads) and in WATCH.
func TestForwardingOverRESP(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	fs := e.followers()
	f, other := fs[0], fs[1]
	c := ctx(t)

	if n, err := f.rdb.ZAdd(c, "lb", redisZ(1, "a"), redisZ(2, "b")).Result(); err != nil || n != 2 {
		t.Fatalf("ZADD through a follower: %v %v", n, err)
	}
	ro := redis.NewClient(&redis.Options{Addr: f.addr, Protocol: 2, OnConnect: func(ctx2 context.Context, cn *redis.Conn) error {
		return cn.ReadOnly(ctx2).Err()
	}})
	defer ro.Close()
	if r, err := ro.ZIncrBy(c, "lb", 5, "a").Result(); err != nil || r != 6 {
		t.Fatalf("ZINCRBY on a READONLY connection: %v %v", r, err)
	}
	if r, err := ro.ZRank(c, "lb", "a").Result(); err != nil || r != 1 {
		t.Fatalf("READONLY connection does not read its own write: rank %v %v", r, err)
	}
	for i := 1; i <= 300; i++ {
		if err := ro.ZIncrBy(c, "own", 1, "m").Err(); err != nil {
			t.Fatal(err)
		}
		if s, err := ro.ZScore(c, "own", "m").Result(); err != nil || s != float64(i) {
			t.Fatalf("READONLY read right after write %d reads %v %v", i, s, err)
		}
	}
	// WATCH after the connection's own write: EXEC is not aborted by it.
	if err := ro.Watch(c, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(c, func(p redis.Pipeliner) error {
			p.ZIncrBy(c, "own", 1, "m")
			return nil
		})
		return err
	}, "own"); err != nil {
		t.Fatalf("WATCH/EXEC after the connection's own write: %v", err)
	}

	// A pipeline through a follower keeps its order.
	pipe := f.rdb.Pipeline()
	for i := 0; i < 100; i++ {
		pipe.ZAdd(c, "seq", redisZ(float64(i), "m"))
		pipe.ZScore(c, "seq", "m")
	}
	cmds, err := pipe.Exec(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if s := cmds[2*i+1].(*redis.FloatCmd).Val(); s != float64(i) {
			t.Fatalf("pipelined ZSCORE %d read %v", i, s)
		}
	}

	// MULTI/EXEC through a follower.
	res, err := f.rdb.TxPipelined(c, func(p redis.Pipeliner) error {
		p.ZAdd(c, "tx", redisZ(1, "x"))
		p.ZIncrBy(c, "tx", 2, "x")
		return nil
	})
	if err != nil || res[1].(*redis.FloatCmd).Val() != 3 {
		t.Fatalf("MULTI/EXEC through a follower: %v %v", res, err)
	}

	// Linearizable reads on the other follower see all of it.
	if s, err := other.rdb.ZScore(c, "tx", "x").Result(); err != nil || s != 3 {
		t.Fatalf("other follower reads %v %v", s, err)
	}
	if r, err := other.rdb.ZRange(c, "lb", 0, -1).Result(); err != nil || strings.Join(r, ",") != "b,a" {
		t.Fatalf("other follower ZRANGE %v %v", r, err)
	}

	// Many clients through one follower at once.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := f.rdb.ZAdd(c, "many", redisZ(1, fmt.Sprint(w, ":", i))).Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, err := other.rdb.ZCard(c, "many").Result(); err != nil || n != 800 {
		t.Fatalf("ZCARD after concurrent forwarded writes: %v %v", n, err)
	}
}

// The cluster views present one shard: the leader as master, followers
// as replicas, at their RESP addresses.
func TestClusterViews(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	leader := e.waitFormed(3)
	testutil.Poll(t, 10*time.Second, "progress reports on the leader", func() bool {
		info, _ := leader.rdb.Info(ctx(t), "replication").Result()
		return strings.Count(info, "last_report_ms=") == 2 && !strings.Contains(info, "last_report_ms=never")
	})
	for _, tn := range e.all() {
		slots, err := tn.rdb.ClusterSlots(ctx(t)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) != 1 || slots[0].Start != 0 || slots[0].End != 16383 || len(slots[0].Nodes) != 3 {
			t.Fatalf("%s CLUSTER SLOTS: %+v", tn.id, slots)
		}
		if slots[0].Nodes[0].Addr != leader.addr {
			t.Fatalf("%s CLUSTER SLOTS master %s, leader is at %s", tn.id, slots[0].Nodes[0].Addr, leader.addr)
		}
		role, err := tn.rdb.Do(ctx(t), "ROLE").Slice()
		if err != nil {
			t.Fatal(err)
		}
		want := "slave"
		if tn == leader {
			want = "master"
		}
		if role[0] != want {
			t.Fatalf("%s ROLE %v", tn.id, role)
		}
		nodes, err := tn.rdb.ClusterNodes(ctx(t)).Result()
		if err != nil || strings.Count(nodes, "\n") != 3 || !strings.Contains(nodes, "myself") {
			t.Fatalf("%s CLUSTER NODES %q %v", tn.id, nodes, err)
		}
	}
	// Hash slots are Redis's: CRC16 of the key or its hash tag.
	for key, want := range map[string]int64{"foo": 12182, "{user1000}.following": 3443, "{}x": 10595} {
		if got, err := leader.rdb.ClusterKeySlot(ctx(t), key).Result(); err != nil || got != want {
			t.Fatalf("CLUSTER KEYSLOT %s = %v %v, want %d", key, got, err, want)
		}
	}
}

// A blocking pop on a follower is forwarded like any write, waits on the
// follower, and is served by a write that arrives through another node.
func TestBlockingPopThroughAFollower(t *testing.T) {
	e := newEnv(t, 3)
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	leader := e.waitFormed(3)
	f := e.followers()[0]
	got := make(chan []string, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := f.rdb.BZPopMin(ctx(t), 10*time.Second, "queue").Result()
		if err != nil {
			errs <- err
			return
		}
		got <- []string{r.Key, fmt.Sprint(r.Member), fmt.Sprint(r.Score)}
	}()
	testutil.Poll(t, 10*time.Second, "the pop to block on the follower", func() bool {
		info, _ := f.rdb.Info(ctx(t), "clients").Result()
		return strings.Contains(info, "blocked_clients:1")
	})
	if err := leader.rdb.ZAdd(ctx(t), "queue", redisZ(3, "job")).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if strings.Join(r, ",") != "queue,job,3" {
			t.Fatalf("BZPOPMIN through a follower: %v", r)
		}
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(15 * time.Second):
		t.Fatal("the blocked pop on the follower was not served")
	}
	if n, err := e.followers()[1].rdb.ZCard(ctx(t), "queue").Result(); err != nil || n != 0 {
		t.Fatalf("the popped member is still there elsewhere: %v %v", n, err)
	}
}

// With requirepass, clients authenticate to any node and their writes are
// forwarded over the node-to-node plane, which needs no client password;
// the internal requests are unknown on the client port.
func TestForwardingWithPassword(t *testing.T) {
	e := newEnv(t, 3)
	e.password = "s3cret"
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	fs := e.followers()
	if err := fs[0].rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err(); err != nil {
		t.Fatalf("write through a follower with requirepass: %v", err)
	}
	if s, err := fs[1].rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || s != 1 {
		t.Fatalf("linearizable read on a follower with requirepass: %v %v", s, err)
	}
	anon := redis.NewClient(&redis.Options{Addr: fs[0].addr, MaxRetries: -1, Protocol: 2})
	defer anon.Close()
	if err := anon.Do(ctx(t), "GOBLIN.APPLY", "x").Err(); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("an internal command on the client port: %v", err)
	}
}
