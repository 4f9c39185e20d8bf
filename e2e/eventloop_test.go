package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// With one thread running Go code, --event-loop auto has the event loop
// serve plain clients: go-redis connections (HELLO and CLIENT SETINFO
// first), pipelines of writes, reads, and batches the loop lends to the
// connection's goroutine (a transaction, a read the writes in flight hold
// back), all at once; every write lands once, in order, and every read
// sees the writes its connection made.
func TestEventLoopServesClients(t *testing.T) {
	g := StartGoblind(t, NodeOptions{Args: []string{"--procs", "1", "--event-loop", "auto"}})
	ctx := context.Background()
	const workers, rounds = 12, 150
	runWorkers(t, workers, func(w int) error {
		c := g.Client(func(o *redis.Options) { o.PoolSize = 1 })
		key := fmt.Sprintf("w%d", w)
		for r := range rounds {
			var err error
			switch w % 3 {
			case 0: // a pipeline of writes, then a read
				_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for range 4 {
						p.ZIncrBy(ctx, key, 1, "m")
					}
					return nil
				})
			case 1: // one write at a time
				for range 4 {
					if err = c.ZIncrBy(ctx, key, 1, "m").Err(); err != nil {
						break
					}
				}
			case 2: // a transaction
				_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
					for range 4 {
						p.ZIncrBy(ctx, key, 1, "m")
					}
					return nil
				})
			}
			if err != nil {
				return fmt.Errorf("worker %d round %d: %v", w, r, err)
			}
			got, err := c.ZScore(ctx, key, "m").Result()
			if err != nil || got != float64(4*(r+1)) {
				return fmt.Errorf("worker %d round %d: ZSCORE %v, %v; want %d", w, r, got, err, 4*(r+1))
			}
		}
		return nil
	})
	ctl := g.Client()
	// A transaction sent whole (MULTI to EXEC in one pipeline) runs in its
	// connection's goroutine, which then gives the connection back: no
	// hand-off for good.
	checkEventLoop(t, ctl, "the event loop", workers*rounds)
	// A client killed while the loop serves it is closed.
	victim := g.Client(func(o *redis.Options) { o.PoolSize = 1; o.ClientName = "victim" })
	if err := victim.ZAdd(ctx, "v", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := ctl.ClientKillByFilter(ctx, "SKIPME", "yes", "TYPE", "normal", "ID", fmt.Sprint(victim.ClientID(ctx).Val())).Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL: %d, %v", n, err)
	}
}

// On a 3-node cluster whose nodes serve clients from the event loop, a
// follower's linearizable reads stay in its loop (one read barrier for
// the reads that arrive together) and still see every write the leader
// acknowledged before they were sent.
func TestEventLoopFollowerReads(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Args: []string{"--procs", "1", "--event-loop", "on"}})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	follower := Followers(nodes, leader)[0]
	const workers, rounds = 8, 100
	runWorkers(t, workers, func(w int) error {
		wc := leader.Client(func(o *redis.Options) { o.PoolSize = 1 })
		rc := follower.Client(func(o *redis.Options) { o.PoolSize = 1 })
		key := fmt.Sprintf("w%d", w)
		for r := range rounds {
			if err := wc.ZIncrBy(ctx, key, 1, "m").Err(); err != nil {
				return fmt.Errorf("worker %d round %d: ZINCRBY on the leader: %v", w, r, err)
			}
			// Acknowledged by the leader: a read sent now on the follower
			// must see it.
			got, err := rc.ZScore(ctx, key, "m").Result()
			if err != nil || got != float64(r+1) {
				return fmt.Errorf("worker %d round %d: ZSCORE on the follower %v, %v; want %d", w, r, got, err, r+1)
			}
		}
		return nil
	})
	// The reads ran in the loop (at least one batch each).
	checkEventLoop(t, follower.Client(), "the follower's event loop", workers*rounds)
}

// runWorkers runs fn(0) to fn(workers-1) at once and reports each error.
func runWorkers(t *testing.T, workers int, fn func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fn(w)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// checkEventLoop checks, by c's INFO, that the node's event loop (who)
// ran at least batches batches and handed no connection back for good.
func checkEventLoop(t *testing.T, c *redis.Client, who string, batches int) {
	t.Helper()
	if n := infoInt(t, c, "stats", "goblin_event_loop_batches"); n < int64(batches) {
		t.Errorf("%s ran %d batches, want at least %d", who, n, batches)
	}
	if n := infoInt(t, c, "stats", "goblin_event_loop_handoffs"); n != 0 {
		t.Errorf("%s handed %d connections back for good, want 0", who, n)
	}
}
