package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestLargeWritesInCluster: in a 3-node cluster a write whose log entry
// would pass one entry's limit (1 MiB) is split into pieces and applied
// whole on every node, through a follower (a 12 MiB member) and the
// leader (a transaction of 1.2 MB), with no election; one over 16 MiB is
// refused with its error, nothing applied; and goblind import
// copies a set whose DUMP payload passes the limit (as ZADDs under it).
// The nodes run with steadyArgs.
func TestLargeWritesInCluster(t *testing.T) {
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3, Args: steadyArgs})
	leader := WaitLeader(t, nodes, 30*time.Second)
	ctx := context.Background()
	lc := leader.Client()
	term := infoInt(t, lc, "raft", "raft_term")
	fc := Followers(nodes, leader)[0].Client(func(o *redis.Options) { o.ReadTimeout = 30 * time.Second; o.WriteTimeout = 30 * time.Second })

	err := fc.ZAdd(ctx, "big", redis.Z{Score: 2, Member: strings.Repeat("w", 17<<20)}).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR the write is too large for one Raft log entry (") || !strings.Contains(err.Error(), "at most 16777216)") {
		t.Fatalf("ZADD of a 17 MiB member through a follower: %v", err)
	}
	member := strings.Repeat("x", 12<<20)
	if err := fc.ZAdd(ctx, "big", redis.Z{Score: 1, Member: member}).Err(); err != nil {
		t.Fatalf("ZADD of a 12 MiB member through a follower: %v", err)
	}
	tx := lc.TxPipeline()
	tx.Del(ctx, "multi")
	var queued []string
	for i := range 3 {
		queued = append(queued, fmt.Sprintf("%d%s", i, strings.Repeat("y", 400<<10)))
		tx.ZAdd(ctx, "multi", redis.Z{Score: float64(i), Member: queued[i]})
	}
	if _, err := tx.Exec(ctx); err != nil {
		t.Fatalf("MULTI of three 400 KiB ZADDs: %v", err)
	}
	for _, n := range nodes {
		c := n.Client(func(o *redis.Options) { o.ReadTimeout = 30 * time.Second })
		if got, err := c.ZRangeWithScores(ctx, "big", 0, -1).Result(); err != nil || len(got) != 1 || got[0].Member != member || got[0].Score != 1 {
			t.Fatalf("%s: ZRANGE big holds %d members (%v): only the 12 MiB member belongs", n.ID, len(got), err)
		}
		if got, err := c.ZRange(ctx, "multi", 0, -1).Result(); err != nil || strings.Join(got, ",") != strings.Join(queued, ",") {
			t.Fatalf("%s: ZRANGE multi holds %d members (%v): the transaction's three belong", n.ID, len(got), err)
		}
	}
	if got := infoInt(t, lc, "raft", "raft_term"); got != term {
		t.Fatalf("the term moved from %d to %d: leadership changed", term, got)
	}

	// A set of 5,000 members of 4,000 bytes: one RESTORE of 20 MB before.
	rs := testutil.StartRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	// Random members: Redis compresses a payload's repetitive strings.
	rng := testutil.Rand(t, 0)
	wide := make([]string, 5000)
	pipe := rc.Pipeline()
	for i := range wide {
		b := make([]byte, 1998)
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		wide[i] = fmt.Sprintf("%05d%x", i, b)[:4000]
		pipe.ZAdd(ctx, "wide", redis.Z{Score: float64(i), Member: wide[i]})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := rc.MemoryUsage(ctx, "wide").Result(); err != nil || n < 1<<20 {
		t.Fatalf("the set takes %d bytes in Redis (%v): the test needs more than an entry holds", n, err)
	}
	rep := runImport(t, "--from", "redis://"+rs.Addr, "--addr", leader.Addr)
	if rep["imported keys"] != "1" || rep["imported members"] != "5000" || rep["failed keys"] != "0" {
		t.Fatalf("import report %v", rep)
	}
	check := func(how string) {
		t.Helper()
		if got, err := fc.ZCard(ctx, "wide").Result(); err != nil || got != 5000 {
			t.Fatalf("%s: ZCARD wide through a follower = %d, %v", how, got, err)
		}
		if got, err := fc.ZRange(ctx, "wide", 4999, 4999).Result(); err != nil || len(got) != 1 || got[0] != wide[4999] {
			t.Fatalf("%s: the last member: %v", how, err)
		}
	}
	check("from Redis")

	// The same set from an RDB file, into a database of its own.
	if err := rc.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := lc.Del(ctx, "wide").Err(); err != nil {
		t.Fatal(err)
	}
	rep = runImport(t, "--rdb", filepath.Join(rc.ConfigGet(ctx, "dir").Val()["dir"], "dump.rdb"), "--addr", leader.Addr)
	if rep["imported keys"] != "1" || rep["imported members"] != "5000" || rep["failed keys"] != "0" {
		t.Fatalf("import --rdb report %v", rep)
	}
	check("from an RDB file")
}
