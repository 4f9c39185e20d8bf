package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// Scenarios with several concurrent clients (blocking pops, transactions,
// expiry), each run against redis-server and goblind alike; the test
// compares what the clients observed on both. Steps that must happen in
// order wait for the server to report the state they depend on (a client
// blocked, a key gone), polling with a deadline.

// scenarioEnv is one server as a scenario sees it.
type scenarioEnv struct {
	t    *testing.T
	addr string
	log  []string // what the clients observed, in order
}

func (e *scenarioEnv) conn() *dconn {
	e.t.Helper()
	c, err := dialD(e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.c.Close() })
	return c
}

// do runs a command and returns its reply, failing the test on I/O errors.
func (e *scenarioEnv) do(c *dconn, argv ...string) string {
	e.t.Helper()
	r, err := c.do(argv...)
	if err != nil {
		e.t.Fatalf("%v: %v", argv, err)
	}
	return string(r)
}

// note records an observation for the comparison.
func (e *scenarioEnv) note(format string, args ...any) {
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

// waitBlocked polls INFO until n clients are blocked.
func (e *scenarioEnv) waitBlocked(c *dconn, n int) {
	e.t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	testutil.Eventually(e.t, 10*time.Second, func() error {
		if info := e.do(c, "INFO", "clients"); !strings.Contains(info, want) {
			return fmt.Errorf("waiting for %q", strings.TrimSpace(want))
		}
		return nil
	})
}

// read waits for the reply to a command sent earlier.
func (e *scenarioEnv) read(c *dconn) string {
	e.t.Helper()
	r, err := c.read()
	if err != nil {
		e.t.Fatalf("read: %v", err)
	}
	return string(r)
}

func (e *scenarioEnv) send(c *dconn, argv ...string) {
	e.t.Helper()
	if err := c.send(argv); err != nil {
		e.t.Fatal(err)
	}
}

var scenarios = []struct {
	name string
	run  func(e *scenarioEnv)
}{
	{"first blocked, first served", func(e *scenarioEnv) {
		ctl := e.conn()
		var waiters []*dconn
		for i := 0; i < 3; i++ {
			w := e.conn()
			e.send(w, "BZPOPMIN", "q", "0")
			e.waitBlocked(ctl, i+1)
			waiters = append(waiters, w)
		}
		e.note("zadd %q", e.do(ctl, "ZADD", "q", "1", "a", "2", "b", "3", "c", "4", "d"))
		for i, w := range waiters {
			e.note("waiter %d got %q", i, e.read(w))
		}
		e.note("left %q", e.do(ctl, "ZRANGE", "q", "0", "-1"))
		e.waitBlocked(ctl, 0)
	}},
	{"one member for two waiters", func(e *scenarioEnv) {
		ctl := e.conn()
		w1, w2 := e.conn(), e.conn()
		e.send(w1, "BZPOPMAX", "q", "0")
		e.waitBlocked(ctl, 1)
		e.send(w2, "BZPOPMAX", "q", "5")
		e.waitBlocked(ctl, 2)
		e.note("zadd %q", e.do(ctl, "ZADD", "q", "1", "a"))
		e.note("first %q", e.read(w1))
		e.waitBlocked(ctl, 1)
		e.note("zadd %q", e.do(ctl, "ZADD", "q", "2", "b"))
		e.note("second %q", e.read(w2))
	}},
	{"several keys, the one that is written wakes", func(e *scenarioEnv) {
		ctl, w := e.conn(), e.conn()
		e.send(w, "BZMPOP", "0", "3", "k1", "k2", "k3", "MAX", "COUNT", "2")
		e.waitBlocked(ctl, 1)
		e.note("zadd %q", e.do(ctl, "ZADD", "k2", "1", "x", "2", "y", "3", "z"))
		e.note("got %q", e.read(w))
		e.note("left %q", e.do(ctl, "ZRANGE", "k2", "0", "-1", "WITHSCORES"))
	}},
	{"keys arriving by RENAME, MOVE, COPY and a store wake waiters", func(e *scenarioEnv) {
		ctl := e.conn()
		w := e.conn()
		e.do(w, "SELECT", "1")
		e.send(w, "BZPOPMIN", "dst", "0")
		e.waitBlocked(ctl, 1)
		e.note("zadd in db 0 %q", e.do(ctl, "ZADD", "dst", "1", "db0"))
		e.do(ctl, "SELECT", "1")
		e.note("rename %q", e.do(ctl, "RENAME", "nosuch", "dst"))
		e.do(ctl, "SELECT", "0")
		e.note("move %q", e.do(ctl, "MOVE", "dst", "1"))
		e.note("got %q", e.read(w))
		e.send(w, "BZPOPMIN", "dst", "0")
		e.waitBlocked(ctl, 1)
		e.do(ctl, "SELECT", "1")
		e.do(ctl, "ZADD", "src", "1", "a")
		e.note("rename %q", e.do(ctl, "RENAME", "src", "dst"))
		e.do(ctl, "SELECT", "0")
		e.note("got %q", e.read(w))
		e.send(w, "BZPOPMAX", "dst2", "0")
		e.waitBlocked(ctl, 1)
		e.do(ctl, "ZADD", "src2", "5", "b")
		e.note("copy %q", e.do(ctl, "COPY", "src2", "dst2", "DB", "1"))
		e.note("got %q", e.read(w))
		e.send(w, "BZPOPMAX", "dst3", "0")
		e.waitBlocked(ctl, 1)
		e.do(ctl, "SELECT", "1")
		e.do(ctl, "ZADD", "s1", "1", "x", "2", "y")
		e.note("store %q", e.do(ctl, "ZUNIONSTORE", "dst3", "1", "s1", "WEIGHTS", "3"))
		e.note("got %q", e.read(w))
	}},
	{"CLIENT UNBLOCK", func(e *scenarioEnv) {
		ctl, w := e.conn(), e.conn()
		id := strings.TrimSpace(e.do(w, "CLIENT", "ID")[1:])
		e.note("not blocked %q", e.do(ctl, "CLIENT", "UNBLOCK", id))
		e.send(w, "BZPOPMIN", "q", "0")
		e.waitBlocked(ctl, 1)
		e.note("bad reason %q", e.do(ctl, "CLIENT", "UNBLOCK", id, "NOW"))
		e.note("bad id %q", e.do(ctl, "CLIENT", "UNBLOCK", "x"))
		e.note("timeout %q", e.do(ctl, "CLIENT", "UNBLOCK", id, "TIMEOUT"))
		e.note("waiter %q", e.read(w))
		e.send(w, "BZMPOP", "0", "1", "q", "MIN")
		e.waitBlocked(ctl, 1)
		e.note("error %q", e.do(ctl, "CLIENT", "UNBLOCK", id, "error"))
		e.note("waiter %q", e.read(w))
		e.note("after %q", e.do(w, "PING"))
	}},
	{"a timeout of centuries waits", func(e *scenarioEnv) {
		ctl, w := e.conn(), e.conn()
		e.send(w, "BZPOPMIN", "q", "1e12")
		e.waitBlocked(ctl, 1)
		e.note("zadd %q", e.do(ctl, "ZADD", "q", "1", "a"))
		e.note("got %q", e.read(w))
	}},
	{"timeout", func(e *scenarioEnv) {
		w := e.conn()
		start := time.Now()
		e.note("bzpopmin %q", e.do(w, "BZPOPMIN", "nothing", "0.2"))
		if d := time.Since(start); d < 150*time.Millisecond {
			e.t.Errorf("timed out after %v, want about 200ms", d)
		}
		e.note("bzmpop %q", e.do(w, "BZMPOP", "0.05", "1", "nothing", "MIN"))
		e.do(w, "HELLO", "3")
		e.note("resp3 %q", e.do(w, "BZPOPMAX", "nothing", "0.05"))
	}},
	{"a transaction never blocks", func(e *scenarioEnv) {
		c := e.conn()
		e.do(c, "MULTI")
		e.do(c, "BZPOPMIN", "empty", "0")
		e.do(c, "BZMPOP", "0", "1", "empty", "MIN")
		e.do(c, "ZADD", "full", "1", "a")
		e.do(c, "BZPOPMIN", "empty", "full", "0")
		e.note("exec %q", e.do(c, "EXEC"))
	}},
	{"connection and server commands inside a transaction", func(e *scenarioEnv) {
		c := e.conn()
		for _, argv := range [][]string{
			{"MULTI"}, {"CLIENT", "SETNAME", "tx"}, {"ZADD", "e", "1", "a"}, {"CLIENT", "GETNAME"},
			{"CONFIG", "GET", "databases"}, {"CONFIG", "SET", "databases", "4"}, {"ZCARD", "e"},
		} {
			e.note("%v %q", argv, e.do(c, argv...))
		}
		e.note("exec %q", e.do(c, "EXEC"))
		for _, argv := range [][]string{
			{"MULTI"}, {"CONFIG", "NOPE"}, {"CLIENT", "SETNAME"}, {"COMMAND", "COUNT", "x"}, {"ZADD", "e", "2", "b"},
		} {
			e.note("%v %q", argv, e.do(c, argv...))
		}
		e.note("exec %q", e.do(c, "EXEC"))
	}},
	{"a disconnected waiter takes nothing", func(e *scenarioEnv) {
		ctl, w := e.conn(), e.conn()
		e.send(w, "BZPOPMIN", "q", "0")
		e.waitBlocked(ctl, 1)
		w.c.Close()
		e.waitBlocked(ctl, 0)
		e.note("zadd %q", e.do(ctl, "ZADD", "q", "1", "a"))
		e.note("zcard %q", e.do(ctl, "ZCARD", "q"))
	}},
	{"commands pipelined after a blocking pop wait for it", func(e *scenarioEnv) {
		ctl, w := e.conn(), e.conn()
		e.send(w, "BZPOPMIN", "q", "0")
		e.send(w, "ZCARD", "q")
		e.send(w, "PING")
		e.waitBlocked(ctl, 1)
		e.note("zadd %q", e.do(ctl, "ZADD", "q", "1", "a", "2", "b"))
		e.note("pop %q card %q ping %q", e.read(w), e.read(w), e.read(w))
	}},
	{"watch sees another client's write", func(e *scenarioEnv) {
		a, b := e.conn(), e.conn()
		e.do(a, "ZADD", "w", "1", "x")
		e.do(a, "WATCH", "w", "absent")
		e.note("other %q", e.do(b, "ZINCRBY", "w", "1", "x"))
		e.do(a, "MULTI")
		e.do(a, "ZADD", "w", "5", "y")
		e.note("exec %q", e.do(a, "EXEC"))
		e.do(a, "WATCH", "w")
		e.note("other %q", e.do(b, "ZADD", "unrelated", "1", "x"))
		e.do(a, "MULTI")
		e.do(a, "ZADD", "w", "5", "y")
		e.note("exec %q", e.do(a, "EXEC"))
		e.do(a, "WATCH", "absent")
		e.note("flush %q", e.do(b, "FLUSHDB"))
		e.do(a, "MULTI")
		e.do(a, "PING")
		e.note("exec after flushing a key that never existed %q", e.do(a, "EXEC"))
	}},
	{"expiry: absent at once, watched key expires", func(e *scenarioEnv) {
		a, b := e.conn(), e.conn()
		e.do(a, "ZADD", "e", "1", "x")
		e.do(a, "ZADD", "keep", "1", "x")
		e.note("pexpire %q", e.do(a, "PEXPIRE", "e", "300"))
		e.do(a, "WATCH", "e")
		testutil.Eventually(e.t, 10*time.Second, func() error {
			if r := e.do(b, "EXISTS", "e"); r != ":0\r\n" {
				return fmt.Errorf("key still there: %q", r)
			}
			return nil
		})
		e.note("zscore %q zcard %q ttl %q", e.do(b, "ZSCORE", "e", "x"), e.do(b, "ZCARD", "e"), e.do(b, "TTL", "e"))
		e.do(a, "MULTI")
		e.do(a, "ZADD", "keep", "2", "y")
		e.note("exec %q", e.do(a, "EXEC"))
		e.note("keep %q", e.do(b, "ZRANGE", "keep", "0", "-1"))
	}},
	{"watching a key that already expired", func(e *scenarioEnv) {
		a, b := e.conn(), e.conn()
		e.do(a, "ZADD", "gone", "1", "x")
		e.do(a, "PEXPIRE", "gone", "100")
		testutil.Eventually(e.t, 10*time.Second, func() error {
			if r := e.do(b, "EXISTS", "gone"); r != ":0\r\n" {
				return fmt.Errorf("key still there: %q", r)
			}
			return nil
		})
		e.do(a, "WATCH", "gone")
		e.do(a, "MULTI")
		e.do(a, "PING")
		e.note("exec %q", e.do(a, "EXEC"))
	}},
}

// TestConcurrentClientsMatchRedis runs every scenario on both servers and
// compares the observations.
func TestConcurrentClientsMatchRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{Args: []string{"--double-format", "7.0", "--fsync", "everysec"}})
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var logs [2][]string
			for i, addr := range []string{rs.Addr, g.Addr} {
				e := &scenarioEnv{t: t, addr: addr}
				c := e.conn()
				e.do(c, "FLUSHALL")
				sc.run(e)
				logs[i] = e.log
			}
			t.Logf("observed:\n  %s", strings.Join(logs[1], "\n  "))
			if strings.Join(logs[0], "\n") != strings.Join(logs[1], "\n") {
				t.Errorf("redis:\n  %s\ngoblin:\n  %s", strings.Join(logs[0], "\n  "), strings.Join(logs[1], "\n  "))
			}
		})
	}
}

// TestBlockedClientsLeaveOnShutdown checks that goblind stops promptly
// while clients are blocked, and that they see their connection close.
func TestBlockedClientsLeaveOnShutdown(t *testing.T) {
	g := StartGoblind(t, NodeOptions{})
	e := &scenarioEnv{t: t, addr: g.Addr}
	ctl := e.conn()
	var waiters []*dconn
	for i := 0; i < 3; i++ {
		w := e.conn()
		e.send(w, "BZPOPMIN", "never", "0")
		waiters = append(waiters, w)
	}
	e.waitBlocked(ctl, 3)
	start := time.Now()
	g.Stop()
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("shutdown took %v with blocked clients", d)
	}
	for i, w := range waiters {
		if r, err := w.read(); err == nil && !bytes.HasPrefix(r, []byte("-")) {
			t.Errorf("waiter %d got %q after shutdown", i, r)
		}
	}
}

// TestClusterBlockedPops blocks clients on every node of a 3-node cluster
// and writes through another node: each blocked client is woken by its
// own node applying the write and receives a distinct member, decided by
// the log; the set ends where every node agrees.
func TestClusterBlockedPops(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	leader := WaitLeader(t, nodes, 30*time.Second)
	var waiters []*dconn
	for i, n := range nodes {
		e := &scenarioEnv{t: t, addr: n.Addr}
		for j := 0; j < 2; j++ {
			w := e.conn()
			e.send(w, "BZPOPMIN", "jobs", "0")
			waiters = append(waiters, w)
		}
		e.waitBlocked(e.conn(), 2)
		t.Logf("2 clients blocked on %s (leader: %v)", nodes[i].ID, n == leader)
	}
	// Write through a follower: it forwards to the leader, every node
	// applies, and each node's waiters propose their pops.
	writer := Followers(nodes, leader)[0]
	e := &scenarioEnv{t: t, addr: writer.Addr}
	c := e.conn()
	if r := e.do(c, "ZADD", "jobs", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f", "7", "g"); r != ":7\r\n" {
		t.Fatalf("ZADD: %q", r)
	}
	got := map[string]bool{}
	for i, w := range waiters {
		r, err := w.read()
		if err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
		v := mustParse(r)
		if len(v.elems) != 3 || v.elems[0].str != "jobs" || got[v.elems[1].str] {
			t.Fatalf("waiter %d got %q (already given: %v)", i, r, got)
		}
		got[v.elems[1].str] = true
	}
	// Six of seven members went to the six waiters; all nodes agree on
	// the one left.
	for _, n := range nodes {
		ne := &scenarioEnv{t: t, addr: n.Addr}
		nc := ne.conn()
		testutil.Eventually(t, 10*time.Second, func() error {
			r := ne.do(nc, "ZRANGE", "jobs", "0", "-1")
			v := mustParse([]byte(r))
			if len(v.elems) != 1 || got[v.elems[0].str] {
				return fmt.Errorf("%s: %q after the pops %v", n.ID, r, got)
			}
			return nil
		})
	}
}
