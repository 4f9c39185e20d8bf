package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
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
	testutil.Eventually(t, 20*time.Second, func() error {
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
// The nodes run with steadyArgs.
func TestMaxClientsKeepsPeerDescriptors(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit is not installed")
	}
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3, Args: steadyArgs})
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

// vmSize returns a process's virtual memory size in bytes (VmSize).
func vmSize(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmSize %q", v)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmSize")
	return 0
}

// TestMaxMemoryUnderAddressSpaceLimit: goblind under an address-space
// limit that leaves its heap a few hundred megabytes, with a maxmemory
// well within it. Writes are refused with -OOM once used memory passes
// maxmemory, reads and DEL work, writes resume once memory is freed, and
// the process never dies: without maxmemory the same writes end in
// "fatal error: out of memory".
func TestMaxMemoryUnderAddressSpaceLimit(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit is not installed")
	}
	// The address space a goblind takes before it holds any data (the Go
	// runtime reserves much of it), plus 768 MiB for the heap.
	probe := StartGoblind(t, NodeOptions{})
	limit := vmSize(t, probe.cmd.Process.Pid) + 768<<20
	probe.Stop()

	g := StartGoblind(t, NodeOptions{
		Wrap: []string{"prlimit", fmt.Sprintf("--as=%d", limit), "--"},
		Args: []string{"--maxmemory", "128mb", "--fsync", "everysec"},
	})
	ctx := context.Background()
	c := g.Client(func(o *redis.Options) { o.ReadTimeout = 30 * time.Second })
	if got := infoInt(t, c, "memory", "maxmemory"); got != 128<<20 {
		t.Fatalf("INFO maxmemory = %d", got)
	}
	member := strings.Repeat("x", 1000)
	zadd := func(key string, batch int) error {
		zs := make([]redis.Z, 500)
		for i := range zs {
			zs[i] = redis.Z{Score: float64(i), Member: fmt.Sprintf("%08d-%d-%s", batch, i, member)}
		}
		return c.ZAdd(ctx, key, zs...).Err()
	}
	isOOM := func(err error) bool {
		return err != nil && err.Error() == "OOM command not allowed when used memory > 'maxmemory'."
	}
	// Half a megabyte a write, up to 4 GiB: far more than the limit holds.
	written, refused := 0, 0
	for batch := 0; batch < 8192 && refused < 20; batch++ {
		switch err := zadd("big", batch); {
		case err == nil:
			written++
		case isOOM(err):
			refused++
		default:
			t.Fatalf("ZADD %d after %d accepted: %v\n%s", batch, written, err, g.Log())
		}
	}
	if refused == 0 {
		t.Fatalf("no write refused after %d accepted", written)
	}
	t.Logf("%d writes of 500 members accepted before -OOM; used_memory %d", written, infoInt(t, c, "memory", "used_memory"))

	// What may grow memory is refused. The refusals start collections,
	// and used memory can dip just under the limit once the garbage is
	// gone: then one copy is taken (as in Redis, a command admitted under
	// the limit may pass it), and the next is refused for sure.
	copies := 0
	for ; copies < 2; copies++ {
		err := c.ZRangeStore(ctx, fmt.Sprint("copy", copies), redis.ZRangeArgs{Key: "big", Start: 0, Stop: -1}).Err()
		if isOOM(err) {
			break
		}
		if err != nil {
			t.Fatalf("ZRANGESTORE: %v", err)
		}
	}
	if copies == 2 {
		t.Fatalf("two copies of a set as large as maxmemory were taken")
	}
	if n, err := c.ZCard(ctx, "big").Result(); err != nil || n != int64(written*500) {
		t.Fatalf("ZCARD = %d, %v; want %d", n, err, written*500)
	}
	if got, err := c.ZRange(ctx, "big", 0, 0).Result(); err != nil || len(got) != 1 {
		t.Fatalf("ZRANGE = %v, %v", got, err)
	}
	if err := c.ZRem(ctx, "big", fmt.Sprintf("%08d-%d-%s", 0, 0, member)).Err(); err != nil {
		t.Fatalf("ZREM over maxmemory: %v", err)
	}
	if n, err := c.Del(ctx, "big", "copy0").Result(); err != nil || n != int64(1+copies) {
		t.Fatalf("DEL = %d, %v", n, err)
	}
	// Writes resume once the memory is free again.
	testutil.Eventually(t, 20*time.Second, func() error { return zadd("small", 0) })
	if !g.Running() || strings.Contains(g.Log(), "fatal error") {
		t.Fatalf("goblind died:\n%s", g.Log())
	}
}

// TestMaxMemoryLeaderDecidesInCluster: the leader's maxmemory decides for
// writes sent to any node (a follower forwards them, and the refusal
// comes back as Redis's -OOM); a follower's own maxmemory does not.
func TestMaxMemoryLeaderDecidesInCluster(t *testing.T) {
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3})
	leader := WaitLeader(t, nodes, 30*time.Second)
	follower := Followers(nodes, leader)[0]
	ctx := context.Background()
	lc := leader.Client()
	fc := DialRaw(t, follower.Addr)
	if got := string(fc.Do("ZADD", "k", "1", "a", "2", "b")); got != ":2\r\n" {
		t.Fatalf("ZADD = %q", got)
	}

	if err := follower.Client().ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if got := string(fc.Do("ZADD", "k", "3", "c")); got != ":1\r\n" {
		t.Fatalf("a follower's maxmemory refused a write: %q", got)
	}
	if err := follower.Client().ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}

	if err := lc.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct {
		argv []string
		want string
	}{
		{[]string{"ZADD", "k", "4", "d"}, oomReply},
		{[]string{"ZINCRBY", "k", "1", "a"}, oomReply},
		{[]string{"ZSCORE", "k", "a"}, "$1\r\n1\r\n"},
		{[]string{"ZREM", "k", "c"}, ":1\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "5", "e"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n"},
	} {
		if got := string(fc.Do(ex.argv...)); got != ex.want {
			t.Fatalf("%q through a follower: %q, want %q", ex.argv, got, ex.want)
		}
	}
	// A pipeline through the follower: each command on its own.
	fc.Send(append(append(EncodeCommand("ZADD", "k", "6", "f"), EncodeCommand("ZREM", "k", "b")...), EncodeCommand("DEL", "k")...))
	for i, want := range []string{oomReply, ":1\r\n", ":1\r\n"} {
		if got := string(fc.Read()); got != want {
			t.Fatalf("pipeline reply %d: %q, want %q", i, got, want)
		}
	}
	if err := lc.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if got := string(fc.Do("ZADD", "k", "7", "g")); got != ":1\r\n" {
		t.Fatalf("ZADD once the limit is lifted: %q", got)
	}
}

const oomReply = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
