package e2e

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client limits (docs/operations.md, "Limits"): maxclients within the
// open-files limit.

const maxClientsErr = "-ERR max number of clients reached\r\n"

// clientOrRefusal dials addr and sends PING: it returns the connection
// when it is served, or nil after checking that it was refused with
// Redis's maxclients error.
func clientOrRefusal(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("PING\r\n"))
	buf := make([]byte, len(maxClientsErr))
	n, _ := readReplyPrefix(c, buf)
	switch got := string(buf[:n]); {
	case strings.HasPrefix(got, "+PONG\r\n"):
		c.SetDeadline(time.Time{})
		t.Cleanup(func() { c.Close() })
		return c
	case got == maxClientsErr:
		c.Close()
		return nil
	default:
		c.Close()
		t.Fatalf("a new connection read %q", got)
		return nil
	}
}

// readReplyPrefix reads until buf is full, the peer closes, or "+PONG\r\n" came.
func readReplyPrefix(c net.Conn, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		n += k
		if err != nil || string(buf[:n]) == "+PONG\r\n" {
			return n, err
		}
	}
	return n, nil
}

// infoInt returns an integer field of INFO section.
func infoInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	m, err := Info(context.Background(), c, section)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(m[field], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s %s = %q", section, field, m[field])
	}
	return v
}

// TestMaxClientsUnderFileLimit: under an open-files limit of 512, goblind
// lowers maxclients to what leaves its reserve free, says so, refuses the
// connections past it with Redis's error, and goes on writing its log and
// snapshots while they knock.
func TestMaxClientsUnderFileLimit(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit is not installed")
	}
	const nofile, reserve = 512, 256
	g := StartGoblind(t, NodeOptions{
		Wrap: []string{"prlimit", fmt.Sprintf("--nofile=%d:%d", nofile, nofile), "--"},
		Args: []string{"--snapshot-threshold", "64", "--snapshot-interval", "100ms"},
	})
	if !strings.Contains(g.Log(), "maxclients lowered") {
		t.Fatalf("no warning that maxclients was lowered:\n%s", g.Log())
	}
	ctl := g.Client(func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	if got, err := ctl.ConfigGet(ctx, "maxclients").Result(); err != nil || got["maxclients"] != strconv.Itoa(nofile-reserve) {
		t.Fatalf("CONFIG GET maxclients = %v, %v; want %d", got, err, nofile-reserve)
	}
	if got := infoInt(t, ctl, "clients", "maxclients"); got != nofile-reserve {
		t.Fatalf("INFO maxclients = %d", got)
	}

	// Fill every place, then knock 300 times more.
	held := 1 // ctl
	for clientOrRefusal(t, g.Addr) != nil {
		held++
		if held > nofile {
			t.Fatalf("more than %d clients accepted", nofile)
		}
	}
	if held > nofile-reserve {
		t.Fatalf("%d clients held, maxclients is %d", held, nofile-reserve)
	}
	t.Logf("%d clients held", held)
	for range 300 {
		if c := clientOrRefusal(t, g.Addr); c != nil {
			t.Fatalf("a connection past maxclients was served")
		}
	}
	if got := infoInt(t, ctl, "stats", "rejected_connections"); got < 301 {
		t.Fatalf("rejected_connections = %d, want at least 301", got)
	}

	// The log and snapshots still get their descriptors.
	before := infoInt(t, ctl, "raft", "raft_last_snapshot_index")
	for i := range 300 {
		if err := ctl.ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: i}).Err(); err != nil {
			t.Fatalf("ZADD with every client place taken: %v", err)
		}
	}
	Eventually(t, 20*time.Second, func() error {
		if got := infoInt(t, ctl, "raft", "raft_last_snapshot_index"); got <= before {
			return fmt.Errorf("no snapshot since index %d", before)
		}
		return nil
	})
	if strings.Contains(g.Log(), "too many open files") {
		t.Fatalf("goblind ran out of descriptors:\n%s", g.Log())
	}
}

// TestMaxClientsKeepsPeerDescriptors: a cluster's leader whose clients
// fill its open-files limit still replicates, takes forwarded writes and
// stays leader: the peers' descriptors are out of the clients' reach.
func TestMaxClientsKeepsPeerDescriptors(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit is not installed")
	}
	nodes := StartCluster(t, testSeed(t), ClusterOptions{Size: 3})
	leader := WaitLeader(t, nodes, 30*time.Second)
	ctx := context.Background()
	lc := leader.Client(func(o *redis.Options) { o.PoolSize = 1 })
	term := infoInt(t, lc, "raft", "raft_term")

	// The open-files limit lowered under the running leader, and
	// maxclients with it, as it would have been at start.
	const nofile, reserve = 400, 256
	pid := leader.cmd.Process.Pid
	if out, err := exec.Command("prlimit", "--pid", strconv.Itoa(pid), fmt.Sprintf("--nofile=%d:%d", nofile, nofile)).CombinedOutput(); err != nil {
		t.Skipf("prlimit --pid: %v %s", err, out)
	}
	if err := lc.ConfigSet(ctx, "maxclients", strconv.Itoa(nofile-reserve)).Err(); err != nil {
		t.Fatal(err)
	}
	// Raising it past what the limit holds is refused, naming what fits.
	err := lc.ConfigSet(ctx, "maxclients", "100000").Err()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("try with %d", nofile-reserve)) {
		t.Fatalf("CONFIG SET maxclients 100000 = %v", err)
	}

	held := 1
	for clientOrRefusal(t, leader.Addr) != nil {
		held++
		if held > nofile {
			t.Fatalf("more than %d clients accepted", nofile)
		}
	}
	for range 200 {
		if clientOrRefusal(t, leader.Addr) != nil {
			t.Fatalf("a connection past maxclients was served")
		}
	}

	// Writes through each follower are forwarded to the leader and
	// replicated back.
	for i, f := range Followers(nodes, leader) {
		fc := f.Client()
		for j := range 50 {
			if err := fc.ZAdd(ctx, "k", redis.Z{Score: float64(j), Member: fmt.Sprintf("%d-%d", i, j)}).Err(); err != nil {
				t.Fatalf("ZADD through follower %s: %v", f.ID, err)
			}
		}
	}
	if got, err := lc.ZCard(ctx, "k").Result(); err != nil || got != 100 {
		t.Fatalf("ZCARD on the leader = %d, %v", got, err)
	}
	if got := infoInt(t, lc, "raft", "raft_term"); got != term {
		t.Fatalf("the term moved from %d to %d: leadership changed", term, got)
	}
	if strings.Contains(leader.Log(), "too many open files") {
		t.Fatalf("the leader ran out of descriptors:\n%s", leader.Log())
	}
}
