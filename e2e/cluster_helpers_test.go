package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// ClusterNode is one goblind of a test cluster.
type ClusterNode struct {
	*Goblind
	ID     string
	Gossip string
}

// steadyArgs are the flags of a cluster whose test checks that no
// election happened: a heartbeat timeout of 1s, since the default 300ms
// lease is shorter than the stalls a node gets on a 2-CPU machine that
// runs the race-detector tests beside it (a leader can go 300-500ms
// without hearing a follower there), while what such a test guards
// against (heartbeats held up for good, or for seconds) still shows.
var steadyArgs = []string{"--heartbeat-timeout", "1s"}

// ClusterOptions configure StartCluster.
type ClusterOptions struct {
	Size   int      // nodes
	Expect int      // --bootstrap-expect (default Size)
	Args   []string // extra flags for every node
	// Leave keeps goblind's default graceful leave on SIGTERM; tests turn
	// it off by default so cleanup does not wait for quorum.
	Leave bool
	// Data gives node i its data directory (default: a temp dir).
	Data func(i int) string
}

// StartCluster starts o.Size goblind processes that form a cluster through
// gossip, in a random order with random delays (as people start them), and
// waits until they agree on a leader.
func StartCluster(t testing.TB, rng *rand.Rand, o ClusterOptions) []*ClusterNode {
	t.Helper()
	if o.Expect == 0 {
		o.Expect = o.Size
	}
	nodes := make([]*ClusterNode, o.Size)
	var seeds []string
	for i := range nodes {
		nodes[i] = &ClusterNode{ID: fmt.Sprintf("n%d", i+1), Gossip: testutil.FreeAddr(t, "")}
		seeds = append(seeds, nodes[i].Gossip)
	}
	order := rng.Perm(o.Size)
	t.Logf("start order %v", order)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k, i := range order {
		delay := time.Duration(rng.IntN(300)) * time.Millisecond * time.Duration(k)
		n := nodes[i]
		// Info level: a failed test prints each node's log, and the
		// gossip and bootstrap story is told at info.
		args := []string{"--id", n.ID, "--gossip-addr", n.Gossip, "--join", strings.Join(seeds, ","),
			"--bootstrap-expect", strconv.Itoa(o.Expect), "--log-level", "info"}
		if !o.Leave {
			args = append(args, "--leave-on-shutdown=false")
		}
		args = append(args, o.Args...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			no := NodeOptions{Args: args, NoWait: true}
			if o.Data != nil {
				no.Data = o.Data(i)
			}
			g := StartGoblind(t, no)
			mu.Lock()
			n.Goblind = g
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Forming takes gossip, one bootstrap and an election; under the race
	// detector with other packages' tests on the same two CPUs that has
	// taken more than 20 seconds.
	for _, n := range nodes {
		n.WaitReady(45 * time.Second)
	}
	WaitLeader(t, nodes, 30*time.Second)
	return nodes
}

// Info returns INFO section as key/value pairs.
func Info(ctx context.Context, c *redis.Client, section string) (map[string]string, error) {
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	return testutil.ParseInfo(s), nil
}

// WaitLeader waits until every running node names the same leader, that
// leader says it leads, and its configuration holds every running node;
// it returns the leader.
func WaitLeader(t testing.TB, nodes []*ClusterNode, d time.Duration) *ClusterNode {
	t.Helper()
	clients := map[string]*redis.Client{}
	id := waitLeaderOf(t, d, func() map[string]*redis.Client {
		running := map[string]*redis.Client{}
		for _, n := range nodes {
			if n.Goblind == nil || !n.Running() {
				continue
			}
			if clients[n.ID] == nil {
				clients[n.ID] = n.Client()
			}
			running[n.ID] = clients[n.ID]
		}
		return running
	})
	for _, n := range nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("leader %s is not one of the test's nodes", id)
	return nil
}

// waitLeaderOf is WaitLeader over clients of the running nodes by ID; it
// returns the leader's ID.
func waitLeaderOf(t testing.TB, d time.Duration, clients func() map[string]*redis.Client) string {
	t.Helper()
	var leader string
	testutil.Eventually(t, d, func() error {
		leader = ""
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		named := map[string]bool{}
		running := clients()
		for id, c := range running {
			info, err := Info(ctx, c, "replication")
			if err != nil {
				return fmt.Errorf("%s: %v", id, err)
			}
			named[info["goblin_leader_id"]] = true
			if info["role"] == "master" {
				leader = id
			}
		}
		if leader == "" || len(named) != 1 || !named[leader] {
			return fmt.Errorf("no agreed leader yet: %v", named)
		}
		members, err := GoblinNodes(ctx, running[leader])
		if err != nil {
			return err
		}
		inConf := 0
		for _, m := range members {
			if m["suffrage"] != "none" && running[m["id"]] != nil {
				inConf++
			}
		}
		if inConf < len(running) {
			return fmt.Errorf("configuration has %d of %d running nodes", inConf, len(running))
		}
		return nil
	})
	return leader
}

// Followers returns the running nodes other than leader.
func Followers(nodes []*ClusterNode, leader *ClusterNode) []*ClusterNode {
	var out []*ClusterNode
	for _, n := range nodes {
		if n != leader && n.Goblind != nil && n.Running() {
			out = append(out, n)
		}
	}
	return out
}

// patient returns client options for writes that may wait out an election
// (goblind waits up to 5 s for a leader before answering).
func patient(o *redis.Options) {
	o.ReadTimeout = 15 * time.Second
	o.WriteTimeout = 15 * time.Second
}

// commandCalls returns how many times the node executed each command.
func commandCalls(t testing.TB, c *redis.Client) map[string]int {
	t.Helper()
	info, err := Info(context.Background(), c, "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		out[name], _ = strconv.Atoi(calls)
	}
	return out
}

// GoblinNodes returns GOBLIN NODES as one map per node.
func GoblinNodes(ctx context.Context, c *redis.Client) ([]map[string]string, error) {
	raw, err := c.Do(ctx, "GOBLIN", "NODES").Slice()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for _, r := range raw {
		m := map[string]string{}
		switch v := r.(type) {
		case []interface{}: // RESP2: flat pairs
			for i := 0; i+1 < len(v); i += 2 {
				m[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
			}
		case map[interface{}]interface{}: // RESP3
			for k, x := range v {
				m[fmt.Sprint(k)] = fmt.Sprint(x)
			}
		}
		out = append(out, m)
	}
	return out, nil
}
