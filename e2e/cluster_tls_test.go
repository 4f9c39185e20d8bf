package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// A cluster serving clients over TLS only (--tls-only), its nodes
// authenticated to one another by a cluster secret: the nodes gossip their
// TLS addresses, so CLUSTER SLOTS lists every node at its TLS port and a
// go-redis ClusterClient over TLS writes through the leader and reads from
// followers.
func TestTLSOnlyCluster(t *testing.T) {
	p := newPKI(t)
	secret := writeSecret(t)
	type tnode struct {
		g   *Goblind
		tls string
		c   *redis.Client
	}
	var nodes []*tnode
	var seeds []string
	gossip := make([]string, 3)
	for i := range gossip {
		gossip[i] = testutil.FreeAddr(t, "")
		seeds = append(seeds, gossip[i])
	}
	for i := range 3 {
		tlsAddr := testutil.FreeAddr(t, "")
		args := []string{"--id", fmt.Sprintf("n%d", i+1), "--gossip-addr", gossip[i], "--join", strings.Join(seeds, ","),
			"--bootstrap-expect", "3", "--cluster-secret-file", secret, "--leave-on-shutdown=false", "--log-level", "info",
			"--tls-only", "--tls-port", fmt.Sprint(portOf(t, tlsAddr)),
			"--tls-cert-file", p.server.Cert, "--tls-key-file", p.server.Key, "--tls-ca-cert-file", p.server.CA}
		g := StartGoblind(t, NodeOptions{Args: args, NoWait: true})
		c := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: p.clientConfig(t, false), MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		nodes = append(nodes, &tnode{g: g, tls: tlsAddr, c: c})
	}
	ctx := context.Background()
	var leader string
	testutil.Eventually(t, 60*time.Second, func() error {
		for _, n := range nodes {
			slots, err := n.c.ClusterSlots(ctx).Result()
			if err != nil {
				return err
			}
			if len(slots) != 1 || len(slots[0].Nodes) != 3 {
				return fmt.Errorf("%s: CLUSTER SLOTS %+v", n.tls, slots)
			}
			for _, sn := range slots[0].Nodes {
				found := false
				for _, m := range nodes {
					found = found || sn.Addr == m.tls
				}
				if !found {
					return fmt.Errorf("%s: CLUSTER SLOTS lists %s, not a TLS address", n.tls, sn.Addr)
				}
			}
			leader = slots[0].Nodes[0].Addr
		}
		return nil
	})
	t.Logf("the TLS-only cluster formed, led by %s", leader)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[2].tls}, TLSConfig: p.clientConfig(t, false), ReadOnly: true})
	defer cc.Close()
	for i := range 20 {
		if err := cc.ZAdd(ctx, "lb", redis.Z{Score: float64(i), Member: fmt.Sprint("m", i)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// ReadOnly reads go to followers and read their local state, which
	// catches up with the writes within the replication lag.
	testutil.Eventually(t, 10*time.Second, func() error {
		if n, err := cc.ZCard(ctx, "lb").Result(); err != nil || n != 20 {
			return fmt.Errorf("ZCARD through the cluster client: %d %v", n, err)
		}
		return nil
	})
	for _, n := range nodes {
		if s, err := n.c.ZScore(ctx, "lb", "m19").Result(); err != nil || s != 19 {
			t.Fatalf("%s: ZSCORE %v %v", n.tls, s, err)
		}
	}
}
