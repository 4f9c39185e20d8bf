package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// TestRepliesMatchRedis sends the same commands to redis-server and to
// goblind (with Redis 7.0's double format, as the reference is Debian's
// Redis 7.0) in RESP2 and RESP3 and compares every reply byte for byte.
func TestRepliesMatchRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{Args: []string{"--double-format", "7.0"}})
	script := [][]string{
		{"PING"}, {"PING", "hello"}, {"ECHO", "x y"},
		{"ZADD", "lb", "10", "alice", "20", "bob", "15", "carol", "15", "dave", "0.1", "eve", "-inf", "zed", "+inf", "top"},
		{"ZADD", "lb", "NX", "5", "alice"}, {"ZADD", "lb", "XX", "CH", "11", "alice", "1", "nobody"},
		{"ZADD", "lb", "GT", "CH", "9", "alice", "30", "bob"}, {"ZADD", "lb", "LT", "1e-5", "carol"},
		{"ZADD", "lb", "INCR", "2.5", "dave"}, {"ZADD", "lb", "NX", "XX", "1", "a"}, {"ZADD", "lb", "GT", "LT", "1", "a"},
		{"ZADD", "lb", "INCR", "1", "a", "2", "b"}, {"ZADD", "lb", "1"}, {"ZADD", "lb", "abc", "x"}, {"ZADD", "lb", "nan", "x"},
		{"ZINCRBY", "lb", "0.2", "eve"}, {"ZINCRBY", "lb", "1", "newbie"}, {"ZINCRBY", "lb", "x", "eve"},
		{"ZINCRBY", "lb", "-inf", "top"},
		{"ZSCORE", "lb", "eve"}, {"ZSCORE", "lb", "missing"}, {"ZSCORE", "nokey", "x"}, {"ZMSCORE", "lb", "eve", "nope", "bob"},
		{"ZCARD", "lb"}, {"ZCARD", "nokey"},
		{"ZRANK", "lb", "bob"}, {"ZREVRANK", "lb", "bob"}, {"ZRANK", "lb", "nope"}, {"ZRANK", "nokey", "x"},
		{"ZRANGE", "lb", "0", "-1"}, {"ZRANGE", "lb", "0", "-1", "WITHSCORES"}, {"ZRANGE", "lb", "-3", "-2", "WITHSCORES"},
		{"ZRANGE", "lb", "5", "1"}, {"ZRANGE", "lb", "0", "-1", "REV", "WITHSCORES"},
		{"ZRANGE", "lb", "(10", "20", "BYSCORE", "WITHSCORES"}, {"ZRANGE", "lb", "20", "(10", "BYSCORE", "REV"},
		{"ZRANGE", "lb", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "3", "WITHSCORES"},
		{"ZRANGE", "lb", "0", "-1", "LIMIT", "1", "2"}, {"ZRANGE", "lb", "[a", "[c", "BYLEX", "WITHSCORES"},
		{"ZRANGE", "lb", "x", "1", "BYSCORE"}, {"ZRANGE", "lb", "a", "1"}, {"ZRANGE", "lb", "0", "1", "FOO"},
		{"ZRANGEBYSCORE", "lb", "-inf", "+inf", "WITHSCORES"}, {"ZRANGEBYSCORE", "lb", "(15", "+inf", "LIMIT", "0", "1"},
		{"ZREVRANGE", "lb", "0", "2", "WITHSCORES"}, {"ZREVRANGE", "nokey", "0", "-1"},
		{"ZCOUNT", "lb", "-inf", "+inf"}, {"ZCOUNT", "lb", "(15", "20"}, {"ZCOUNT", "lb", "a", "b"},
		{"ZREM", "lb", "zed", "nope"}, {"ZREM", "nokey", "a"},
		{"EXISTS", "lb", "lb", "nokey"}, {"TYPE", "lb"}, {"TYPE", "nokey"}, {"DBSIZE"},
		{"SELECT", "3"}, {"ZADD", "other", "1", "x"}, {"DBSIZE"}, {"SELECT", "0"}, {"SELECT", "16"}, {"SELECT", "x"},
		{"DEL", "lb", "nokey"}, {"UNLINK", "lb"}, {"EXISTS", "lb"},
		{"ZADD", "a", "1", "x"}, {"FLUSHDB"}, {"DBSIZE"}, {"FLUSHALL"}, {"FLUSHALL", "bad"},
		{"NOSUCHCOMMAND", "a", "b"}, {"ZADD"}, {"ZSCORE", "a"},
	}
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			rc, gc := DialRaw(t, rs.Addr), DialRaw(t, g.Addr)
			rc.Do("FLUSHALL")
			gc.Do("FLUSHALL")
			if proto == "3" {
				rc.Do("HELLO", "3")
				gc.Do("HELLO", "3")
			}
			for i, argv := range script {
				want, got := rc.Do(argv...), gc.Do(argv...)
				if !bytes.Equal(want, got) {
					t.Errorf("command %d %q:\nredis:  %q\ngoblin: %q", i, argv, want, got)
				}
			}
		})
	}
}

// TestRestartKeepsEverything writes through go-redis, stops goblind with
// SIGTERM, starts it on the same data directory and checks every write.
func TestRestartKeepsEverything(t *testing.T) {
	// A low snapshot threshold makes the restart restore a snapshot and
	// replay the log after it.
	g := StartGoblind(t, NodeOptions{Args: []string{"--snapshot-threshold", "200"}})
	ctx := context.Background()
	c := g.Client()
	want := map[string]map[string]float64{}
	for i := 0; i < 500; i++ {
		key := fmt.Sprintf("k%d", i%7)
		member := fmt.Sprintf("m%d", i%53)
		score, err := c.ZIncrBy(ctx, key, float64(i%11)+0.5, member).Result()
		if err != nil {
			t.Fatalf("ZINCRBY: %v", err)
		}
		if want[key] == nil {
			want[key] = map[string]float64{}
		}
		want[key][member] = score
	}
	if err := c.Do(ctx, "SELECT", "2").Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c2 := g.Client(func(o *redis.Options) { o.DB = 2 })
	if err := c2.ZAdd(ctx, "db2key", redis.Z{Score: 1, Member: "x"}).Err(); err != nil {
		t.Fatal(err)
	}
	g.Stop()
	if code := g.ExitCode(); code != 0 {
		t.Fatalf("goblind exited with %d after SIGTERM:\n%s", code, g.Log())
	}
	g.Restart()
	c3 := g.Client()
	checkSets(t, c3, want)
	c4 := g.Client(func(o *redis.Options) { o.DB = 2 })
	if s, err := c4.ZScore(ctx, "db2key", "x").Result(); err != nil || s != 1 {
		t.Fatalf("db2key after restart: %v %v", s, err)
	}
}

func checkSets(t *testing.T, c *redis.Client, want map[string]map[string]float64) {
	t.Helper()
	ctx := context.Background()
	for key, members := range want {
		got, err := c.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatalf("ZRANGE %s: %v", key, err)
		}
		if len(got) != len(members) {
			t.Errorf("%s has %d members, want %d", key, len(got), len(members))
		}
		for _, z := range got {
			if s, ok := members[z.Member.(string)]; !ok || s != z.Score {
				t.Errorf("%s %v = %v, want %v (present %v)", key, z.Member, z.Score, s, ok)
			}
		}
	}
}

// TestKillNineLosesNothingAcknowledged runs concurrent writers against a
// goblind with --fsync always, kill -9s it mid-load, restarts it, and
// checks that every write that was acknowledged is there.
// TestKillNineLosesNothingAcknowledged runs under every log store and
// fsync mode: even everysec must have each acknowledged write in the
// kernel before the reply.
func TestKillNineLosesNothingAcknowledged(t *testing.T) {
	for _, store := range []string{"wal", "bolt"} {
		for _, fsync := range []string{"always", "everysec"} {
			t.Run(store+"/"+fsync, func(t *testing.T) {
				killNineLosesNothing(t, "--log-store", store, "--fsync", fsync)
			})
		}
	}
}

func killNineLosesNothing(t *testing.T, args ...string) {
	seed := testutil.Seed(t)
	g := StartGoblind(t, NodeOptions{Args: append(args, "--snapshot-threshold", "500")})
	c := g.Client(func(o *redis.Options) { o.PoolSize = 16; o.ReadTimeout = 5 * time.Second })
	ctx := context.Background()

	type ack struct {
		key, member string
		score       float64
	}
	var (
		mu    sync.Mutex
		acked []ack
		count atomic.Int64
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < 20000; i++ { // bounded; the kill ends it sooner
				select {
				case <-stop:
					return
				default:
				}
				key := "w" + strconv.Itoa(w)
				member := strconv.Itoa(i)
				score := float64(r.IntN(1000))
				if err := c.ZAdd(ctx, key, redis.Z{Score: score, Member: member}).Err(); err != nil {
					return // the server died: this write is unacknowledged
				}
				mu.Lock()
				acked = append(acked, ack{key, member, score})
				mu.Unlock()
				count.Add(1)
			}
		}(w)
	}
	testutil.Eventually(t, 60*time.Second, func() error {
		if n := count.Load(); n < 2000 {
			return fmt.Errorf("only %d writes acknowledged", n)
		}
		return nil
	})
	g.Kill()
	close(stop)
	wg.Wait()
	g.Restart()
	c2 := g.Client()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes acknowledged before kill -9", len(acked))
	missing := 0
	for _, a := range acked {
		s, err := c2.ZScore(ctx, a.key, a.member).Result()
		if err != nil || s != a.score {
			missing++
			if missing < 10 {
				t.Errorf("acknowledged ZADD %s %v %s lost: got %v, %v", a.key, a.score, a.member, s, err)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged writes lost", missing, len(acked))
	}
}

// TestGoRedisRESP3 uses go-redis in RESP3 for the command set.
func TestGoRedisRESP3(t *testing.T) {
	g := StartGoblind(t, NodeOptions{})
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := g.Client(func(o *redis.Options) { o.Protocol = proto })
		key := "p" + strconv.Itoa(proto)
		if n, err := c.ZAdd(ctx, key, redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Result(); err != nil || n != 2 {
			t.Fatalf("RESP%d ZADD = %v, %v", proto, n, err)
		}
		if s, err := c.ZIncrBy(ctx, key, 1, "a").Result(); err != nil || s != 2.5 {
			t.Fatalf("RESP%d ZINCRBY = %v, %v", proto, s, err)
		}
		zs, err := c.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil || len(zs) != 2 || zs[0].Member != "b" || zs[1].Score != 2.5 {
			t.Fatalf("RESP%d ZRANGE WITHSCORES = %v, %v", proto, zs, err)
		}
		if r, err := c.ZRank(ctx, key, "a").Result(); err != nil || r != 1 {
			t.Fatalf("RESP%d ZRANK = %v, %v", proto, r, err)
		}
		if rs, err := c.ZRankWithScore(ctx, key, "a").Result(); err != nil || rs.Rank != 1 || rs.Score != 2.5 {
			t.Fatalf("RESP%d ZRANK WITHSCORE = %v, %v", proto, rs, err)
		}
		if s, err := c.ZScore(ctx, key, "b").Result(); err != nil || s != 2 {
			t.Fatalf("RESP%d ZSCORE = %v, %v", proto, s, err)
		}
		if err := c.ZScore(ctx, key, "zz").Err(); err != redis.Nil {
			t.Fatalf("RESP%d ZSCORE missing = %v, want redis.Nil", proto, err)
		}
	}
}

// TestUnixSocket serves the same data over --unixsocket and TCP.
func TestUnixSocket(t *testing.T) {
	sock := t.TempDir() + "/goblin.sock"
	g := StartGoblind(t, NodeOptions{Args: []string{"--unixsocket", sock}})
	ctx := context.Background()
	uc := g.Client(func(o *redis.Options) { o.Network = "unix"; o.Addr = sock })
	if err := uc.ZAdd(ctx, "k", redis.Z{Score: 3, Member: "via-unix"}).Err(); err != nil {
		t.Fatalf("ZADD over the Unix socket: %v", err)
	}
	if s, err := g.Client().ZScore(ctx, "k", "via-unix").Result(); err != nil || s != 3 {
		t.Fatalf("ZSCORE over TCP = %v, %v", s, err)
	}
}
