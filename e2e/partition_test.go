package e2e

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/faults"
	"github.com/goblindb/goblin/internal/testutil"
)

// partitionNetwork puts a cluster's nodes under a faults.Network that
// can cut their node-to-node plane (Raft and forwarding) and gossip ports,
// while their client ports stay reachable. It skips the test where the
// machine does not allow partitions.
func partitionNetwork(t *testing.T, nodes []*ClusterNode) *faults.Network {
	t.Helper()
	var fns []faults.Node
	for _, n := range nodes {
		n.mu.Lock()
		pid := n.cmd.Process.Pid
		n.mu.Unlock()
		fns = append(fns, faults.Node{Name: n.ID, PID: pid, Ports: []int{portOf(t, n.Raft), portOf(t, n.Gossip)}})
	}
	net, err := faults.NewNetwork(fns...)
	if errors.Is(err, faults.ErrUnsupported) {
		t.Skipf("partitions are not possible here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := net.Close(); err != nil {
			t.Errorf("closing the partition network: %v", err)
		}
	})
	return net
}

// counterInput is one operation on a counter (a member's score): an
// increment by delta, or a read.
type counterInput struct {
	key   string
	incr  bool
	delta int64
}

// counterOutput is what the operation returned; known is false for an
// increment whose outcome the client never learned.
type counterOutput struct {
	value int64
	known bool
}

// counterModel: each key is an independent counter starting at 0 (a
// member that does not exist reads as 0; increments are positive, so a
// member that exists is never 0).
var counterModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		return testutil.GroupBy(history, func(op porcupine.Operation) string { return op.Input.(counterInput).key })
	},
	Init: func() interface{} { return int64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st, in, out := state.(int64), input.(counterInput), output.(counterOutput)
		if in.incr {
			next := st + in.delta
			return !out.known || out.value == next, next
		}
		return out.value == st, st
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(counterInput), output.(counterOutput)
		if in.incr {
			if !out.known {
				return fmt.Sprintf("zincrby %s %d -> ?", in.key, in.delta)
			}
			return fmt.Sprintf("zincrby %s %d -> %d", in.key, in.delta, out.value)
		}
		return fmt.Sprintf("zscore %s -> %d", in.key, out.value)
	},
}

// answerKind classifies a write's answer by what it tells the client.
type answerKind int

const (
	answerOK        answerKind = iota // applied
	answerNotDone                     // an error that says it was not applied (TRYAGAIN, CLUSTERDOWN, ...)
	answerUncertain                   // UNCERTAIN, or no answer at all: either
)

func classify(err error) answerKind {
	switch {
	case err == nil:
		return answerOK
	case strings.HasPrefix(err.Error(), "UNCERTAIN "):
		return answerUncertain
	case isRedisError(err):
		return answerNotDone
	}
	// A timeout or a broken connection: the client does not know.
	return answerUncertain
}

// isRedisError reports whether err is an error reply from the server.
func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded)
}

// partitionWorkload runs clients against every node until stop closes:
// ZINCRBY and ZSCORE on counters (recorded for porcupine) and ZADD of
// unique members to a witness set (each answer recorded, to count lost and
// phantom writes).
type partitionWorkload struct {
	start   time.Time
	mu      sync.Mutex
	ops     []porcupine.Operation
	witness map[string]answerKind
	answers map[string]int // error texts, for the log
}

func (w *partitionWorkload) run(t *testing.T, rng *rand.Rand, clients []*redis.Client, workers int, stop chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for id := range workers {
		seed := rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 5))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c := clients[r.IntN(len(clients))]
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				switch p := r.IntN(10); {
				case p < 4:
					w.incr(ctx, id, c, "ctr"+strconv.Itoa(r.IntN(3)), int64(1+r.IntN(9)))
				case p < 7:
					w.read(ctx, id, c, "ctr"+strconv.Itoa(r.IntN(3)))
				default:
					// Pipelined, so that many writes are in flight when a
					// fault strikes.
					pipe := c.Pipeline()
					var cmds []*redis.IntCmd
					for j := range 8 {
						cmds = append(cmds, pipe.ZAdd(ctx, "witness", redis.Z{Score: 1, Member: fmt.Sprintf("w%d-%d-%d", id, i, j)}))
					}
					pipe.Exec(ctx)
					w.mu.Lock()
					for _, cmd := range cmds {
						w.witness[cmd.Args()[3].(string)] = classify(cmd.Err())
						w.note(cmd.Err())
					}
					w.mu.Unlock()
				}
				cancel()
			}
		}()
	}
	return &wg
}

func (w *partitionWorkload) note(err error) {
	if err != nil {
		text := err.Error()
		if i := strings.IndexAny(text, " :"); i > 0 {
			text = text[:i]
		}
		w.answers[text]++
	}
}

func (w *partitionWorkload) incr(ctx context.Context, id int, c *redis.Client, key string, delta int64) {
	in := counterInput{key: key, incr: true, delta: delta}
	call := time.Since(w.start).Nanoseconds()
	v, err := c.ZIncrBy(ctx, key, float64(delta), "m").Result()
	ret := time.Since(w.start).Nanoseconds()
	out := counterOutput{value: int64(v), known: err == nil}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note(err)
	switch classify(err) {
	case answerNotDone:
		return // it did not happen: left out (a phantom shows as an illegal history)
	case answerUncertain:
		ret = math.MaxInt64 // may take effect any time after its call
	}
	w.ops = append(w.ops, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
}

func (w *partitionWorkload) read(ctx context.Context, id int, c *redis.Client, key string) {
	call := time.Since(w.start).Nanoseconds()
	v, err := c.ZScore(ctx, key, "m").Result()
	ret := time.Since(w.start).Nanoseconds()
	if err == redis.Nil {
		v, err = 0, nil
	}
	if err != nil {
		return // a failed read observed nothing
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ops = append(w.ops, porcupine.Operation{ClientId: id, Input: counterInput{key: key}, Call: call,
		Output: counterOutput{value: int64(v), known: true}, Return: ret})
}

// check reads the witness set and compares it with the answers, and checks
// the counters' history with porcupine.
func (w *partitionWorkload) check(t *testing.T, c *redis.Client) {
	t.Helper()
	members, err := c.ZRange(context.Background(), "witness", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, m := range members {
		present[m] = true
	}
	var ok, notDone, uncertain, lost, phantom int
	for m, kind := range w.witness {
		switch kind {
		case answerOK:
			ok++
			if !present[m] {
				lost++
				t.Errorf("lost write: ZADD of %s was acknowledged and is not in the set", m)
			}
		case answerNotDone:
			notDone++
			if present[m] {
				phantom++
				t.Errorf("phantom write: ZADD of %s was answered with an error that says it was not applied, and it was", m)
			}
		default:
			uncertain++
		}
	}
	t.Logf("witness writes: %d acknowledged, %d failed, %d uncertain; %d lost, %d phantom; errors seen: %v",
		ok, notDone, uncertain, lost, phantom, w.answers)
	incrs := 0
	for _, op := range w.ops {
		if op.Input.(counterInput).incr {
			incrs++
		}
	}
	t.Logf("counter history: %d operations (%d increments)", len(w.ops), incrs)
	if incrs < 50 {
		t.Fatalf("only %d increments recorded: the workload did not run", incrs)
	}
	res, info := porcupine.CheckOperationsVerbose(counterModel, w.ops, 2*time.Minute)
	switch res {
	case porcupine.Illegal:
		path := filepath.Join(os.TempDir(), fmt.Sprintf("goblin-linearizability-%d.html", time.Now().UnixNano()))
		if err := porcupine.VisualizePath(counterModel, info, path); err == nil {
			t.Logf("timeline of the violation: %s", path)
		}
		t.Error("the ZINCRBY/ZSCORE history is not linearizable: a write answered as failed took effect, or a read saw the past")
	case porcupine.Unknown:
		t.Log("the linearizability check timed out")
	}
}

// currentLeader returns the node every running node names as leader,
// waiting for one.
func currentLeader(t *testing.T, nodes []*ClusterNode) *ClusterNode {
	t.Helper()
	return WaitLeader(t, nodes, 45*time.Second)
}

// Under partitions of the node-to-node network, with clients still
// reaching every node, no answer lies about a write: the leader is cut
// off again and again for 0.6-2.5 s (and one link between it and a
// follower is cut), while clients ZINCRBY counters and ZADD witnesses
// through every node. Every acknowledged write is there, no write
// answered with an error that says it was not applied took effect, and
// the counters' history, with uncertain increments as possibly applied,
// is linearizable (porcupine).
func TestPartitionsTellTheTruthAboutWrites(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	net := partitionNetwork(t, nodes)
	var clients []*redis.Client
	for _, n := range nodes {
		clients = append(clients, n.Client(patient))
	}
	w := &partitionWorkload{start: time.Now(), witness: map[string]answerKind{}, answers: map[string]int{}}
	stop := make(chan struct{})
	wg := w.run(t, rng, clients, 12, stop)
	const cycles = 6
	for cycle := range cycles {
		time.Sleep(1500 * time.Millisecond) // the workload runs without a fault: the schedule, not a wait
		leader := currentLeader(t, nodes)
		d := time.Duration(600+rng.IntN(1900)) * time.Millisecond
		if cycle == cycles-1 {
			other := Followers(nodes, leader)[0]
			t.Logf("cycle %d: the link %s-%s cut for %v", cycle, leader.ID, other.ID, d)
			if err := net.Cut(leader.ID, other.ID); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Logf("cycle %d: leader %s isolated for %v", cycle, leader.ID, d)
			if err := net.Isolate(leader.ID); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(d) // the fault's length: what is tested, not a wait for a condition
		if err := net.Heal(); err != nil {
			t.Fatal(err)
		}
	}
	leader := currentLeader(t, nodes)
	close(stop)
	wg.Wait()
	w.check(t, leader.Client(patient))
}

// READONLY reads on a follower that was cut off never serve data older
// than --max-staleness: after the heal the follower hears from the leader
// at once but still has a long log to apply, and until it has applied
// what the leader had committed it catches up first or refuses.
func TestPartitionReadonlyStaleness(t *testing.T) {
	const staleness = time.Second
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Args: []string{"--max-staleness", staleness.String()}})
	net := partitionNetwork(t, nodes)
	leader := currentLeader(t, nodes)
	f := Followers(nodes, leader)[0]
	ctx := context.Background()
	lc := leader.Client(patient)
	if err := lc.ZAdd(ctx, "x", redis.Z{Score: 1, Member: "m"}).Err(); err != nil {
		t.Fatal(err)
	}
	ro := f.Client(patient, func(o *redis.Options) {
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }
	})
	testutil.Eventually(t, 10*time.Second, func() error {
		if s, err := ro.ZScore(ctx, "x", "m").Result(); err != nil || s != 1 {
			return fmt.Errorf("x=%v, %v", s, err)
		}
		return nil
	})
	if err := net.Isolate(f.ID); err != nil {
		t.Fatal(err)
	}
	// A long log for the follower to catch up on, then the overwrite.
	pipe := lc.Pipeline()
	for i := range 60000 {
		pipe.ZAdd(ctx, "filler", redis.Z{Score: float64(i), Member: strconv.Itoa(i)})
		if pipe.Len() == 1000 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := lc.ZAdd(ctx, "x", redis.Z{Score: 2, Member: "m"}).Err(); err != nil {
		t.Fatal(err)
	}
	overwritten := time.Now()
	time.Sleep(2 * staleness) // the age the old value reaches: the fault, not a wait
	if err := net.Heal(); err != nil {
		t.Fatal(err)
	}
	served, stale, refused := 0, 0, 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not serve x=2 within 30 s (served %d, stale %d, refused %d)", served, stale, refused)
		}
		s, err := ro.ZScore(ctx, "x", "m").Result()
		if err != nil {
			if !strings.HasPrefix(err.Error(), "CLUSTERDOWN ") {
				t.Fatalf("READONLY read: %v", err)
			}
			refused++
			continue
		}
		served++
		if s == 2 {
			break
		}
		stale++
		if stale == 1 {
			t.Errorf("a READONLY read served x=%v, overwritten %v earlier (--max-staleness %v)", s, time.Since(overwritten).Round(time.Millisecond), staleness)
		}
	}
	t.Logf("after the heal: %d READONLY reads served (%d stale), %d refused", served, stale, refused)
}

// A write in flight on a leader cut off for longer than the node waits to
// learn its outcome is answered -UNCERTAIN, and go-redis, which retries
// TRYAGAIN and CLUSTERDOWN by itself, does not retry it: the node sees the
// command once.
func TestUncertainWriteIsNotRetried(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	net := partitionNetwork(t, nodes)
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		leader := currentLeader(t, nodes)
		// go-redis's default retries (MaxRetries 3), with a read timeout
		// longer than the node's wait.
		c := redis.NewClient(&redis.Options{Addr: leader.Addr, ReadTimeout: 20 * time.Second})
		defer c.Close()
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		before := zincrbyCalls(t, c)
		if err := net.Isolate(leader.ID); err != nil {
			t.Fatal(err)
		}
		err := c.ZIncrBy(ctx, "k", 1, "m").Err()
		calls := zincrbyCalls(t, c) - before
		if err := net.Heal(); err != nil {
			t.Fatal(err)
		}
		if err != nil && strings.HasPrefix(err.Error(), "CLUSTERDOWN ") && attempt < 3 {
			// The leader had stepped down before the write reached it:
			// refused, truthfully. Again.
			t.Logf("attempt %d: %v", attempt, err)
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), "UNCERTAIN ") {
			t.Fatalf("a write in flight on a leader cut off for good: %v, want -UNCERTAIN", err)
		}
		if calls != 1 {
			t.Fatalf("the node saw ZINCRBY %d times: the client retried -UNCERTAIN", calls)
		}
		t.Logf("answered %q after one call", err)
		return
	}
}

// zincrbyCalls returns the node's ZINCRBY count from INFO commandstats.
func zincrbyCalls(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := Info(context.Background(), c, "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	v := info["cmdstat_zincrby"]
	if v == "" {
		return 0
	}
	calls, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(v, ",")[0], "calls="))
	return calls
}
