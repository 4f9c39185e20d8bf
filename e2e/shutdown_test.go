package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
)

// Nodes stopped together whose peers vanish from the network as they
// stop (containers stopped together take their addresses with them) exit
// within seconds, and start again with their data: Raft's shutdown
// waited for its requests to the vanished peers, a dial or a read of up
// to its 10 s timeout each (13.6 s in all, 22 s under docker-compose).
func TestStoppedTogetherWhilePeersVanish(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Leave: true})
	net := partitionNetwork(t, nodes)
	ctx := context.Background()
	if err := currentLeader(t, nodes).Client(patient).ZAdd(ctx, "k", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	// Every node holds the configuration: a node stopped before it has
	// one is not what this test is about.
	for _, n := range nodes {
		testutil.Eventually(t, 10*time.Second, func() error {
			ns, err := GoblinNodes(ctx, n.Client())
			if err != nil {
				return err
			}
			voters := 0
			for _, m := range ns {
				if m["suffrage"] == "voter" {
					voters++
				}
			}
			if voters != 3 {
				return fmt.Errorf("%s sees %d voters", n.ID, voters)
			}
			return nil
		})
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.Stop()
		}()
	}
	time.Sleep(300 * time.Millisecond)
	var alone [][]string
	for _, n := range nodes {
		alone = append(alone, []string{n.ID})
	}
	if err := net.Partition(alone...); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("three nodes stopped together, their peers vanishing, exited in %v", took.Round(time.Millisecond))
	if took > 9*time.Second {
		t.Fatalf("stopping took %v: waiting out Raft's 10 s request timeout", took)
	}
	if err := net.Heal(); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		n.Restart()
	}
	if s, err := currentLeader(t, nodes).Client(patient).ZScore(ctx, "k", "a").Result(); err != nil || s != 1 {
		t.Fatalf("ZSCORE after the restart: %v %v", s, err)
	}
}
