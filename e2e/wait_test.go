package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
)

// WAIT's arguments, errors and a single server's answers (it has no
// replicas) match Redis's, byte for byte, also inside a transaction.
// Timeouts past what the clock can add are refused as Redis 7.2 refuses
// them (7.0, the local reference, did not check), so they are left out.
func TestWaitMatchesRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{})
	rc, gc := DialRaw(t, rs.Addr), DialRaw(t, g.Addr)
	for _, argv := range [][]string{
		{"WAIT", "0", "0"}, {"WAIT", "1", "50"}, {"WAIT", "-1", "0"}, {"WAIT", "x", "0"}, {"WAIT", "1", "x"},
		{"WAIT", "1", "-1"}, {"WAIT", "1", "1.5"}, {"WAIT", "1", "+5"}, {"WAIT", "1", "01"},
		{"WAIT", "99999999999999999999", "0"}, {"WAIT", "1"}, {"WAIT", "1", "2", "3"},
		{"ZADD", "k", "1", "a"}, {"WAIT", "0", "0"}, {"WAIT", "1", "20"},
		{"MULTI"}, {"ZADD", "k", "2", "b"}, {"WAIT", "1", "0"}, {"EXEC"},
	} {
		if want, got := rc.Do(argv...), gc.Do(argv...); !bytes.Equal(want, got) {
			t.Errorf("%q:\nredis:  %q\ngoblin: %q", argv, want, got)
		}
	}
}

// waitCluster starts a 3-node cluster for the WAIT and WAITAOF tests and
// returns its leader, its followers and a context that ends with the test
// (after a minute at most).
func waitCluster(t *testing.T) (*ClusterNode, []*ClusterNode, context.Context) {
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3})
	leader := WaitLeader(t, nodes, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return leader, Followers(nodes, leader), ctx
}

// WAIT on a 3-node cluster counts the other nodes holding the
// connection's writes: at once the majority that committed it, then the
// nodes whose progress reports show it, on the leader and on a follower; a follower's stopping shows
// in the count; CLIENT UNBLOCK ends a WAIT that would block forever.
func TestWaitCountsReplicas(t *testing.T) {
	leader, fs, ctx := waitCluster(t)
	waitN := func(conn *redis.Conn, n, ms int64) int64 {
		t.Helper()
		got, err := conn.Do(ctx, "WAIT", n, ms).Int64()
		if err != nil {
			t.Fatalf("WAIT %d %d: %v", n, ms, err)
		}
		return got
	}
	conn := leader.Client().Conn()
	defer conn.Close()
	// No write yet: the followers gossip reports alive.
	testutil.Eventually(t, 20*time.Second, func() error {
		if got := waitN(conn, 2, 100); got != 2 {
			return fmt.Errorf("WAIT 2 before any write: %d", got)
		}
		return nil
	})
	if err := conn.ZAdd(ctx, "k", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	// A timeout of 0 would block forever below one: the majority holds it.
	if got := waitN(conn, 1, 0); got < 1 {
		t.Fatalf("WAIT 1 0 after a write: %d", got)
	}
	// Both followers report it within a few reports.
	if got := waitN(conn, 2, 20000); got != 2 {
		t.Fatalf("WAIT 2 after a write, every node up: %d", got)
	}

	// Through a follower: the majority at once, then the leader and the
	// other follower, whose progress reports reach every node.
	fconn := fs[0].Client().Conn()
	defer fconn.Close()
	if err := fconn.ZAdd(ctx, "k", redis.Z{Score: 2, Member: "b"}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := waitN(fconn, 1, 0); got != 1 {
		t.Fatalf("WAIT 1 0 through a follower: %d", got)
	}
	if got := waitN(fconn, 2, 20000); got != 2 {
		t.Fatalf("WAIT 2 through a follower, every node up: %d", got)
	}

	// One follower stopped: a new write reaches one follower, not two.
	fs[1].Kill()
	if err := conn.ZAdd(ctx, "k", redis.Z{Score: 3, Member: "c"}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := waitN(conn, 2, 1500); got != 1 {
		t.Fatalf("WAIT 2 with a follower down: %d, want 1", got)
	}
	// Inside a transaction it answers at once.
	cmds, err := conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "WAIT", 2, 0)
		return nil
	})
	if err != nil || cmds[0].(*redis.Cmd).Val() != int64(1) {
		t.Fatalf("WAIT 2 0 in MULTI: %v %v", cmds, err)
	}

	// Blocked forever, until CLIENT UNBLOCK: TIMEOUT answers the count,
	// ERROR an error.
	id, err := conn.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	admin := leader.Client()
	for _, reason := range []string{"TIMEOUT", "ERROR"} {
		type result struct {
			n   int64
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := conn.Do(ctx, "WAIT", 2, 0).Int64()
			done <- result{n, err}
		}()
		testutil.Eventually(t, 10*time.Second, func() error {
			if n, err := admin.Do(ctx, "CLIENT", "UNBLOCK", id, reason).Int64(); err != nil || n != 1 {
				return fmt.Errorf("CLIENT UNBLOCK %d %s: %d %v", id, reason, n, err)
			}
			return nil
		})
		r := <-done
		switch reason {
		case "TIMEOUT":
			if r.err != nil || r.n != 1 {
				t.Fatalf("WAIT unblocked (TIMEOUT): %d %v, want 1", r.n, r.err)
			}
		case "ERROR":
			if r.err == nil || r.err.Error() != "UNBLOCKED client unblocked via CLIENT UNBLOCK" {
				t.Fatalf("WAIT unblocked (ERROR): %d %v", r.n, r.err)
			}
		}
	}
}

// WAITAOF on a 3-node cluster (--fsync always, the default) counts this
// node's log and the other nodes' holding the connection's last write
// durably: this node and the majority at once, the third node once its
// progress report shows the write, on the leader and on a follower; a
// stopped follower is not counted.
func TestWaitaofCountsDurableCopies(t *testing.T) {
	leader, fs, ctx := waitCluster(t)
	waitaof := func(conn *redis.Conn, local, replicas, ms int64) []int64 {
		t.Helper()
		got, err := conn.Do(ctx, "WAITAOF", local, replicas, ms).Int64Slice()
		if err != nil || len(got) != 2 {
			t.Fatalf("WAITAOF %d %d %d: %v %v", local, replicas, ms, got, err)
		}
		return got
	}
	for _, n := range []*ClusterNode{leader, fs[0]} {
		conn := n.Client().Conn()
		defer conn.Close()
		if err := conn.ZAdd(ctx, "k", redis.Z{Score: 1, Member: n.ID}).Err(); err != nil {
			t.Fatal(err)
		}
		// Blocks only until the others' first reports say they sync always.
		if got := waitaof(conn, 1, 1, 0); got[0] != 1 || got[1] < 1 {
			t.Fatalf("%s: WAITAOF 1 1 0 after a write: %v", n.ID, got)
		}
		if got := waitaof(conn, 1, 2, 20000); got[0] != 1 || got[1] != 2 {
			t.Fatalf("%s: WAITAOF 1 2 after a write, every node up: %v", n.ID, got)
		}
	}
	fs[1].Kill()
	conn := leader.Client().Conn()
	defer conn.Close()
	if err := conn.ZAdd(ctx, "k", redis.Z{Score: 2, Member: "x"}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := waitaof(conn, 1, 2, 1500); got[0] != 1 || got[1] != 1 {
		t.Fatalf("WAITAOF 1 2 1500 with a follower down: %v, want [1 1]", got)
	}
}
