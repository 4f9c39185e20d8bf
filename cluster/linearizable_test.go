package cluster_test

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node"
	"github.com/redis/go-redis/v9"
)

// regInput is one operation on a register (a member's score in a key).
type regInput struct {
	key   string
	write bool
	value string // written value
}

// registerModel: each key is an independent register; a read returns the
// last written value ("" before any write).
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		return testutil.GroupBy(history, func(op porcupine.Operation) string { return op.Input.(regInput).key })
	},
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(regInput)
		if in.write {
			return true, in.value
		}
		return output.(string) == state.(string), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(regInput)
		if in.write {
			return fmt.Sprintf("set %s=%s", in.key, in.value)
		}
		return fmt.Sprintf("get %s -> %q", in.key, output)
	},
}

// Clients on every node write and read registers while leadership moves
// around; the history must be linearizable. Reads on followers use the
// leader's read index, writes are forwarded: this is what makes them
// linearizable, and porcupine checks it. Under --fsync always the leader
// fsyncs beside replication (node/leadersync.go), with its commit and read
// indexes capped at its durable log.
func TestLinearizableAcrossNodesAndLeaderChanges(t *testing.T) {
	for _, fsync := range []node.Fsync{node.FsyncEverysec, node.FsyncAlways} {
		t.Run(fsync.String(), func(t *testing.T) { linearizableAcrossNodes(t, fsync) })
	}
}

func linearizableAcrossNodes(t *testing.T, fsync node.Fsync) {
	e := newEnv(t, 3)
	e.nodeCfg = func(c *node.Config) { c.Fsync = fsync }
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	nodes := e.all()

	const clients = 6
	duration := 3 * time.Second
	start := time.Now()
	var (
		mu  sync.Mutex
		ops []porcupine.Operation
		wg  sync.WaitGroup
	)
	stop := make(chan struct{})
	for cl := 0; cl < clients; cl++ {
		// Each client draws its own choices from the test's seed.
		seed := e.rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := newRand(seed)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tn := nodes[rng.IntN(len(nodes))]
				key := "k" + strconv.Itoa(rng.IntN(3))
				in := regInput{key: key, write: rng.IntN(2) == 0}
				call := time.Since(start).Nanoseconds()
				var out string
				var err error
				if in.write {
					in.value = fmt.Sprintf("%d%03d", cl+1, i)
					err = tn.rdb.ZAdd(ctx(t), key, redis.Z{Score: mustFloat(in.value), Member: "m"}).Err()
				} else {
					var s float64
					s, err = tn.rdb.ZScore(ctx(t), key, "m").Result()
					if err == redis.Nil {
						err = nil
					} else if err == nil {
						out = strconv.FormatFloat(s, 'f', -1, 64)
					}
				}
				ret := time.Since(start).Nanoseconds()
				if err != nil {
					if !in.write {
						continue // a failed read observed nothing
					}
					// A failed write may still have happened: it stays
					// pending until the end of the history.
					ret = math.MaxInt64
				}
				mu.Lock()
				ops = append(ops, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	transfers := 0
	for time.Since(start) < duration {
		time.Sleep(400 * time.Millisecond)
		tn := nodes[e.rng.IntN(len(nodes))]
		if err := tn.rdb.Do(ctx(t), "GOBLIN", "TRANSFER").Err(); err == nil {
			transfers++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d operations, %d leadership transfers", len(ops), transfers)
	if len(ops) < 100 {
		t.Fatalf("only %d operations completed", len(ops))
	}
	res, _ := porcupine.CheckOperationsVerbose(registerModel, ops, time.Minute)
	switch res {
	case porcupine.Illegal:
		t.Fatal("the history is not linearizable")
	case porcupine.Unknown:
		t.Log("the linearizability check timed out")
	}
}

func mustFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}
