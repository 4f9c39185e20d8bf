package resp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/node"
)

// exchange is one command and the exact reply bytes Redis 7.2 sends.
type exchange struct {
	argv []string
	want string
}

func run(t *testing.T, c *conn, steps []exchange) {
	t.Helper()
	for i, s := range steps {
		if got := c.do(s.argv...); got != s.want {
			t.Errorf("step %d %q:\n got %q\nwant %q", i, s.argv, got, s.want)
		}
	}
}

func TestConnectionCommands(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"ping", "hi"}, "$2\r\nhi\r\n"},
		{[]string{"PING", "a", "b"}, "-ERR wrong number of arguments for 'ping' command\r\n"},
		{[]string{"ECHO", "x"}, "$1\r\nx\r\n"},
		{[]string{"ECHO"}, "-ERR wrong number of arguments for 'echo' command\r\n"},
		{[]string{"SELECT", "15"}, "+OK\r\n"},
		{[]string{"SELECT", "16"}, "-ERR DB index is out of range\r\n"},
		{[]string{"SELECT", "-1"}, "-ERR DB index is out of range\r\n"},
		{[]string{"SELECT", "1x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"CLIENT", "SETNAME", "bad name"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETNAME", "worker-1"}, "+OK\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "$8\r\nworker-1\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "go-redis"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-foo", "x"}, "-ERR Unrecognized option 'lib-foo'\r\n"},
		{[]string{"CLIENT", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n"},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"HELLO", "3", "FOO"}, "-ERR Syntax error in HELLO option 'FOO'\r\n"},
		{[]string{"AUTH", "pw"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{[]string{"AUTH", "default", "anything"}, "+OK\r\n"},
		{[]string{"AUTH", "bob", "pw"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"NOSUCH", "a"}, "-ERR unknown command 'NOSUCH', with args beginning with: 'a' \r\n"},
		{[]string{"EXEC"}, "-ERR EXEC without MULTI\r\n"},
		{[]string{"DISCARD"}, "-ERR DISCARD without MULTI\r\n"},
	})
	id := c.do("CLIENT", "ID")
	if !strings.HasPrefix(id, ":") {
		t.Fatalf("CLIENT ID = %q", id)
	}
	list := c.do("CLIENT", "LIST")
	if !strings.Contains(list, "name=worker-1") || !strings.Contains(list, "lib-name=go-redis") || !strings.Contains(list, "db=15") {
		t.Errorf("CLIENT LIST lacks this client's state: %q", list)
	}
}

func TestHelloSwitchesProtocol(t *testing.T) {
	s, _ := startServer(t, Config{Version: "7.2.0"})
	c := dial(t, s)
	h := c.do("HELLO", "3", "SETNAME", "n1")
	if !strings.HasPrefix(h, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.0\r\n$5\r\nproto\r\n:3\r\n") {
		t.Fatalf("HELLO 3 = %q", h)
	}
	run(t, c, []exchange{
		{[]string{"ZADD", "k", "1.5", "a"}, ":1\r\n"},
		{[]string{"ZSCORE", "k", "a"}, ",1.5\r\n"},
		{[]string{"ZSCORE", "k", "b"}, "_\r\n"},
		{[]string{"ZRANGE", "k", "0", "-1", "WITHSCORES"}, "*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "$2\r\nn1\r\n"},
	})
	h2 := c.do("HELLO", "2")
	if !strings.HasPrefix(h2, "*14\r\n") {
		t.Fatalf("HELLO 2 = %q", h2)
	}
	run(t, c, []exchange{
		{[]string{"ZSCORE", "k", "a"}, "$3\r\n1.5\r\n"},
		{[]string{"ZSCORE", "k", "b"}, "$-1\r\n"},
		{[]string{"ZRANGE", "k", "0", "-1", "WITHSCORES"}, "*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"},
	})
}

func TestRequirePass(t *testing.T) {
	s, _ := startServer(t, Config{RequirePass: "s3cret"})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ZADD", "k", "1", "a"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "s3cret"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "1", "a"}, ":1\r\n"},
	})
	c2 := dial(t, s)
	if got := c2.do("HELLO", "3", "AUTH", "default", "s3cret"); !strings.HasPrefix(got, "%7\r\n") {
		t.Fatalf("HELLO 3 AUTH = %q", got)
	}
	c3 := dial(t, s)
	run(t, c3, []exchange{{[]string{"HELLO", "3"}, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"}})
}

// TestPipelineOrder sends writes and reads in one batch: replies come back
// in order and each read sees the writes before it.
func TestPipelineOrder(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	var batch []byte
	var want strings.Builder
	for i := 0; i < 50; i++ {
		batch = append(batch, encode("ZADD", "k", "1", "m"+strconv.Itoa(i))...)
		want.WriteString(":1\r\n")
		batch = append(batch, encode("ZCARD", "k")...)
		want.WriteString(":" + strconv.Itoa(i+1) + "\r\n")
	}
	c.send(batch)
	var got strings.Builder
	for i := 0; i < 100; i++ {
		got.WriteString(c.read())
	}
	if got.String() != want.String() {
		t.Fatalf("pipelined replies out of order:\n got %q\nwant %q", got.String(), want.String())
	}
	if n := len(fb.entries); n != 50 {
		t.Fatalf("%d log entries for 50 writes", n)
	}
}

// TestInvalidWritesNeverReachTheLog: syntax errors are answered at the edge.
func TestInvalidWritesNeverReachTheLog(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ZADD", "k", "x", "a"}, "-ERR value is not a valid float\r\n"},
		{[]string{"ZADD", "k", "NX", "XX", "1", "a"}, "-ERR XX and NX options at the same time are not compatible\r\n"},
		{[]string{"ZINCRBY", "k", "nan", "a"}, "-ERR value is not a valid float\r\n"},
		{[]string{"ZADD", "k"}, "-ERR wrong number of arguments for 'zadd' command\r\n"},
		{[]string{"FLUSHALL", "NOW"}, "-ERR syntax error\r\n"},
	})
	if len(fb.entries) != 0 {
		t.Fatalf("invalid commands produced %d log entries", len(fb.entries))
	}
}

func TestNodeErrorsTranslated(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	fb.mu.Lock()
	fb.err = node.ErrNoLeader
	fb.mu.Unlock()
	for _, argv := range [][]string{{"ZADD", "k", "1", "a"}, {"ZSCORE", "k", "a"}} {
		if got := c.do(argv...); !strings.HasPrefix(got, "-CLUSTERDOWN ") {
			t.Errorf("%q with no leader = %q, want -CLUSTERDOWN", argv, got)
		}
	}
	// A write whose outcome is unknown gets a code no client retries by
	// itself; one certainly not applied may be retried.
	for err, want := range map[error]string{node.ErrUncertain: "-UNCERTAIN ", node.ErrNotApplied: "-TRYAGAIN "} {
		fb.mu.Lock()
		fb.err = err
		fb.mu.Unlock()
		if got := c.do("ZADD", "k", "1", "a"); !strings.HasPrefix(got, want) {
			t.Errorf("write failing with %v = %q, want %s", err, got, want)
		}
	}
}

func TestMultiExec(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"MULTI"}, "-ERR MULTI calls can not be nested\r\n"},
		{[]string{"ZADD", "k", "1", "a"}, "+QUEUED\r\n"},
		{[]string{"SELECT", "2"}, "+QUEUED\r\n"},
		{[]string{"ZADD", "k", "2", "b"}, "+QUEUED\r\n"},
		{[]string{"ZCARD", "k"}, "+QUEUED\r\n"},
		{[]string{"PING"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*5\r\n:1\r\n+OK\r\n:1\r\n:1\r\n+PONG\r\n"},
		// SELECT inside the transaction moved the connection to db 2.
		{[]string{"ZSCORE", "k", "b"}, "$1\r\n2\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZADD", "k"}, "-ERR wrong number of arguments for 'zadd' command\r\n"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
	})
	entries := len(fb.entries)
	// WATCH: another client changes the key; EXEC aborts with a null array.
	run(t, c, []exchange{
		{[]string{"WATCH", "w"}, "+OK\r\n"},
	})
	other := dial(t, s)
	other.do("SELECT", "2")
	other.do("ZADD", "w", "1", "x")
	run(t, c, []exchange{
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZADD", "w", "2", "y"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*-1\r\n"},
		{[]string{"ZCARD", "w"}, ":1\r\n"},
	})
	if len(fb.entries) != entries+2 {
		t.Errorf("aborted transaction: %d entries, want %d", len(fb.entries), entries+2)
	}
}

// CLUSTER answers an unknown subcommand and a wrong arity as Redis 7.2's
// command table does.
func TestClusterSubcommandErrors(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	for _, x := range []struct{ argv, want string }{
		{"CLUSTER FOO", "-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.\r\n"},
		{"CLUSTER countkeysinslot 1", "-ERR unknown subcommand 'countkeysinslot'. Try CLUSTER HELP.\r\n"},
		{"CLUSTER KEYSLOT", "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"},
		{"CLUSTER HELP x", "-ERR wrong number of arguments for 'cluster|help' command\r\n"},
		{"CLUSTER Info x", "-ERR wrong number of arguments for 'cluster|info' command\r\n"},
		{"CLUSTER KEYSLOT a", ":15495\r\n"},
	} {
		if got := c.do(strings.Fields(x.argv)...); got != x.want {
			t.Errorf("%s = %q, want %q", x.argv, got, x.want)
		}
	}
}
