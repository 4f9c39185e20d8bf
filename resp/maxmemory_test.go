package resp

import (
	"runtime"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/nodetest"
	"github.com/goblindb/goblin/node"
)

// startNodeServer serves a real single node (Raft in memory) on a free
// loopback port, once it leads.
func startNodeServer(t *testing.T, cfg Config) (*Server, *node.Node) {
	t.Helper()
	n := nodetest.StartLeader(t, node.FsyncEverysec)
	cfg.Addr = "127.0.0.1:0"
	s := NewServer(cfg, n)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, n
}

const oomErr = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"

// TestMaxMemoryNoEviction: over maxmemory, writes that may grow memory get
// Redis's -OOM, in a pipeline each on its own, and a transaction holding
// one is discarded; reads, deletions and the other writes go on; the
// replies are Redis 7.2's bytes.
func TestMaxMemoryNoEviction(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // keep the collector's limit of the test process
	// Used memory counts garbage until it is collected: what tests before
	// this one left (the output buffer tests' replies, tens of MB) must
	// not count against the 100 MB limit below.
	runtime.GC()
	s, _ := startNodeServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ZADD", "k", "1", "a", "2", "b"}, ":2\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory*"}, "*4\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory"}, "*2\r\n$9\r\nmaxmemory\r\n$1\r\n1\r\n"},
		{[]string{"ZADD", "k", "3", "c"}, oomErr},
		{[]string{"ZINCRBY", "k", "1", "a"}, oomErr},
		{[]string{"ZRANGESTORE", "copy", "k", "0", "-1"}, oomErr},
		{[]string{"ZSCORE", "k", "a"}, "$1\r\n1\r\n"},
		{[]string{"ZRANGE", "k", "0", "-1"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{[]string{"ZREM", "k", "b"}, ":1\r\n"},
		{[]string{"EXPIRE", "k", "1000"}, ":1\r\n"},
		{[]string{"PERSIST", "k"}, ":1\r\n"},
		// Queuing holds memory: every command but those ending the
		// transaction is refused, and EXEC aborts.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZSCORE", "k", "a"}, oomErr},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"PING"}, oomErr},
		{[]string{"DISCARD"}, "+OK\r\n"},
	})
	// A pipeline: each command answered on its own.
	c.send([]byte(strings.Join([]string{
		string(encode("ZADD", "k", "5", "e")), string(encode("ZREM", "k", "a")),
		string(encode("ZADD", "k", "6", "f")), string(encode("DEL", "nothing")), string(encode("ZCARD", "k"))}, "")))
	for i, want := range []string{oomErr, ":1\r\n", oomErr, ":0\r\n", ":0\r\n"} {
		if got := c.read(); got != want {
			t.Fatalf("pipeline reply %d: %q, want %q", i, got, want)
		}
	}
	info := c.do("INFO", "memory")
	for _, want := range []string{"\r\nmaxmemory:1\r\n", "\r\nmaxmemory_human:1B\r\n", "\r\nmaxmemory_policy:noeviction\r\n", "\r\nused_memory:"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO memory lacks %q:\n%s", strings.TrimSpace(want), info)
		}
	}
	run(t, c, []exchange{
		{[]string{"CONFIG", "SET", "maxmemory", "0"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "3", "c"}, ":1\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "100mb"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory"}, "*2\r\n$9\r\nmaxmemory\r\n$9\r\n104857600\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1.5gb"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory-policy", "NOEVICTION"}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: noeviction\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory-policy"}, "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"},
	})
	// A transaction queued under the limit, refused at EXEC once memory is
	// over it, as Redis refuses it when memory passes the limit meanwhile.
	other := dial(t, s)
	run(t, c, []exchange{
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "9", "z"}, "+QUEUED\r\n"},
		{[]string{"ZSCORE", "k", "c"}, "+QUEUED\r\n"},
	})
	if got := other.do("CONFIG", "SET", "maxmemory", "1"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	run(t, c, []exchange{
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n"},
		{[]string{"ZSCORE", "k", "z"}, "$-1\r\n"},
	})
}
