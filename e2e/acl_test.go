package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/resp/wire"
)

// Differential tests of ACL users: the same command sequences on
// redis-server and goblind, every reply compared byte for byte.
//
// The reference is $REDIS_SERVER (default: redis-server on PATH). Steps
// marked v72 are compared only against Redis 7.2 or later, as 7.0 words
// them otherwise: its NOPERM texts ("this user has no permissions ..."),
// its descriptions (built from the bitmap, without sanitize-payload), and
// HELLO's NOAUTH text; its ACL LOG entries lack the entry IDs. Run locally against 7.2 with:
//
//	REDIS_SERVER=/path/to/redis-7.2/src/redis-server go test ./e2e -run ACL

// atLeast72 reports whether version is 7.2 or later.
func atLeast72(version string) bool {
	var major, minor int
	fmt.Sscanf(version, "%d.%d", &major, &minor)
	return major > 7 || (major == 7 && minor >= 2)
}

// aclStep is a command sent on connection conn (connections are opened
// as needed), or, with closed, a check that the server closed it.
type aclStep struct {
	conn   int
	argv   []string
	v72    bool // compared only against Redis 7.2+
	closed bool
}

func a(conn int, argv ...string) aclStep   { return aclStep{conn: conn, argv: argv} }
func a72(conn int, argv ...string) aclStep { return aclStep{conn: conn, argv: argv, v72: true} }

var aclScript = []aclStep{
	a(0, "ACL", "WHOAMI"),
	a(0, "ACL", "USERS"),
	a72(0, "ACL", "LIST"),
	a(0, "ACL", "SETUSER", "alice", "on", ">pw", "~k*", "%R~r*", "%W~w*", "&ch", "+@sortedset", "-zadd", "+acl|whoami", "+multi", "+exec", "+client|setname"),
	a72(0, "ACL", "LIST"),
	a72(0, "ACL", "GETUSER", "alice"),
	a(0, "ACL", "GETUSER", "nobody"),
	a(0, "ACL", "SETUSER", "alice", "+nosuch"),
	a(0, "ACL", "SETUSER", "alice", "-@nosuch"),
	a(0, "ACL", "SETUSER", "alice", "~a b"),
	a(0, "ACL", "SETUSER", "alice", "#abc"),
	a(0, "ACL", "SETUSER", "alice", "<nope"),
	a(0, "ACL", "SETUSER", "alice", "allkeys", "~x"),
	a(0, "ACL", "SETUSER", "a b"),
	a(0, "ACL", "SETUSER", "bob", "(~a", "+zadd"),
	a(0, "ACL", "SETUSER", "bob", "(~a", "+zadd)", "(%R~b", "+zrange)"),
	a72(0, "ACL", "GETUSER", "bob"),
	a(0, "ACL", "SETUSER", "bob", "clearselectors", "reset"),
	a72(0, "ACL", "GETUSER", "bob"),
	a(0, "ACL", "DRYRUN", "alice", "zrange", "k", "0", "1"),
	a72(0, "ACL", "DRYRUN", "alice", "zrange", "x", "0", "1"),
	a72(0, "ACL", "DRYRUN", "alice", "zadd", "k", "1", "a"),
	a(0, "ACL", "DRYRUN", "alice", "zadd", "k"),
	a(0, "ACL", "DRYRUN", "nobody", "ping"),
	a(0, "ACL", "DRYRUN", "alice", "nosuchcommand"),
	a(1, "AUTH", "alice", "wrong"),
	a(1, "AUTH", "Alice", "pw"),
	a(1, "AUTH", "alice", "pw"),
	a(1, "ACL", "WHOAMI"),
	a72(1, "ZADD", "k", "1", "a"),
	a(1, "ZRANGE", "k", "0", "-1"),
	a(1, "ZRANGE", "r1", "0", "-1"),
	a72(1, "ZRANGE", "w1", "0", "-1"),
	a72(1, "ZRANGE", "x", "0", "-1"),
	a(1, "ZRANGESTORE", "w1", "r1", "0", "-1"),
	a72(1, "ZRANGESTORE", "r1", "w1", "0", "-1"),
	a(1, "ZUNIONSTORE", "w1", "2", "r1", "k1"),
	a72(1, "ZUNIONSTORE", "w1", "2", "r1", "x"),
	a72(1, "PING"),
	a72(1, "ACL", "LIST"),
	a(1, "CLIENT", "SETNAME", "x"),
	a72(1, "CLIENT", "GETNAME"),
	a(1, "NOSUCH"),
	a(1, "ZADD", "k"),
	a(1, "MULTI"),
	a(1, "ZCARD", "k"),
	a72(1, "ZADD", "k", "1", "a"),
	a(1, "EXEC"),
	a(1, "AUTH", "DEFAULT", "x"),
	a(1, "HELLO", "2", "AUTH", "alice", "wrong"),
	a(1, "ACL", "WHOAMI"),
	a(0, "ACL", "DELUSER", "default"),
	a(0, "ACL", "DELUSER", "alice", "nobody"),
	{conn: 1, closed: true},
	a(0, "CONFIG", "SET", "requirepass", "secret"),
	a(2, "PING"),
	a(2, "AUTH", "wrong"),
	a(2, "AUTH", "secret"),
	a(2, "AUTH", "default", "secret"),
	a72(2, "ACL", "GETUSER", "default"),
	a(2, "CONFIG", "SET", "requirepass", ""),
	a(2, "AUTH", "x"),
	a(0, "ACL", "SETUSER", "default", "off"),
	a(3, "PING"),
	a72(3, "HELLO", "3"),
	a(0, "ACL", "SETUSER", "default", "on"),
	a(0, "ACL", "GENPASS", "0"),
	a(0, "ACL", "GENPASS", "5000"),
	a(0, "ACL", "GENPASS", "x"),
	a(0, "ACL", "LOG", "x"),
	a(0, "ACL", "LOG", "RESET"),
	a(0, "ACL", "LOG"),
	a(0, "ACL", "CAT"),
	a(0, "ACL", "CAT", "nope"),
	a(0, "ACL", "CAT", "a", "b"),
	a(0, "ACL", "NOSUCH"),
	a(0, "ACL"),
	a(0, "ACL", "HELP", "x"),
	a(0, "ACL", "LOAD"),
	a(0, "ACL", "SAVE"),
	a(0, "ACL", "SETUSER", "c", "+@all", "-@hash", "-@slow", "+hget", "-@hash"),
	a(0, "ACL", "SETUSER", "d", "-@all", "+client|list", "+config|get", "+config", "+acl|list", "-acl"),
	a(0, "ACL", "SETUSER", "e", "-@all", "+select|0", "+debug|segfault", "+debug"),
	a(0, "ACL", "SETUSER", "f", "+config|get|x"),
	a(0, "ACL", "SETUSER", "f", "+config|nosuch"),
	a(0, "ACL", "SETUSER", "f", "%RW~a", "%R~a", "%W~b", "%X~c"),
	a72(0, "ACL", "LIST"),
	a(0, "ACL", "USERS"),
}

func TestACLDifferential(t *testing.T) {
	rs := testutil.StartRedis(t)
	version := rs.Version
	g := StartGoblind(t, NodeOptions{})
	v72 := atLeast72(version)
	t.Logf("reference: Redis %s (7.2-only steps compared: %v)", version, v72)
	conns := [2]map[int]*RawConn{{}, {}}
	addrs := [2]string{rs.Addr, g.Addr}
	for i, s := range aclScript {
		var replies [2][]byte
		for side := range 2 {
			c := conns[side][s.conn]
			if c == nil {
				c = DialRaw(t, addrs[side])
				conns[side][s.conn] = c
			}
			if s.closed {
				replies[side] = []byte(fmt.Sprint(closedByServer(c)))
				continue
			}
			replies[side] = c.Do(s.argv...)
		}
		if s.v72 && !v72 {
			continue
		}
		if !bytes.Equal(replies[0], replies[1]) {
			t.Errorf("step %d, connection %d, %q:\nredis  %q\ngoblin %q", i, s.conn, s.argv, replies[0], replies[1])
		}
	}
}

// closedByServer reports whether the server closed c: a PING gets no
// reply.
func closedByServer(c *RawConn) bool {
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.c.Write(EncodeCommand("PING")); err != nil {
		return true
	}
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var out bytes.Buffer
	return wire.CopyReply(c.rd, &out) != nil
}

// ACL LOG's entries on both servers: the same fields, grouping and
// order (the values that depend on time and the connection aside).
func TestACLLogDifferential(t *testing.T) {
	rs := testutil.StartRedis(t)
	version := rs.Version
	g := StartGoblind(t, NodeOptions{})
	ctx := context.Background()
	var logs [2][]map[string]any
	for side, addr := range []string{rs.Addr, g.Addr} {
		admin := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		user := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer admin.Close()
		defer user.Close()
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(admin.Do(ctx, "ACL", "SETUSER", "u", "on", ">pw", "~k*", "+zrange", "+multi", "+exec", "+auth").Err())
		conn := user.Conn()
		defer conn.Close()
		must(conn.Do(ctx, "AUTH", "u", "pw").Err())
		for range 3 {
			conn.Do(ctx, "ZADD", "k", "1", "a")
		}
		conn.Do(ctx, "ZRANGE", "x", "0", "1")
		conn.Do(ctx, "AUTH", "u", "wrong")
		conn.Do(ctx, "AUTH", "u", "wrong")
		conn.Do(ctx, "HELLO", "3", "AUTH", "nobody", "x")
		pipe := conn.TxPipeline()
		pipe.Do(ctx, "ZCARD", "k")
		pipe.Do(ctx, "ZCARD", "zz")
		pipe.Exec(ctx)
		res, err := admin.Do(ctx, "ACL", "LOG").Slice()
		must(err)
		for _, e := range res {
			m := map[string]any{}
			switch v := e.(type) {
			case []any:
				for i := 0; i+1 < len(v); i += 2 {
					m[v[i].(string)] = v[i+1]
				}
			case map[any]any:
				for k, val := range v {
					m[k.(string)] = val
				}
			}
			logs[side] = append(logs[side], m)
		}
		if side == 1 {
			if n, err := admin.Do(ctx, "ACL", "LOG", "2").Slice(); err != nil || len(n) != 2 {
				t.Errorf("ACL LOG 2: %v entries, %v", len(n), err)
			}
		}
	}
	fields := []string{"count", "reason", "context", "object", "username"}
	if atLeast72(version) {
		fields = append(fields, "entry-id")
	}
	if len(logs[0]) != len(logs[1]) {
		t.Fatalf("redis has %d entries, goblin %d:\n%v\n%v", len(logs[0]), len(logs[1]), logs[0], logs[1])
	}
	cmd := regexp.MustCompile(` cmd=\S+ user=\S+ `)
	for i := range logs[0] {
		for _, f := range fields {
			if fmt.Sprint(logs[0][i][f]) != fmt.Sprint(logs[1][i][f]) {
				t.Errorf("entry %d %s: redis %v, goblin %v", i, f, logs[0][i][f], logs[1][i][f])
			}
		}
		ci := [2]string{fmt.Sprint(logs[0][i]["client-info"]), fmt.Sprint(logs[1][i]["client-info"])}
		if cmd.FindString(ci[0]) != cmd.FindString(ci[1]) {
			t.Errorf("entry %d client-info: redis %q, goblin %q", i, ci[0], ci[1])
		}
	}
	for _, e := range logs[1] {
		for _, f := range []string{"age-seconds", "timestamp-created", "timestamp-last-updated", "client-info"} {
			if _, ok := e[f]; !ok {
				t.Errorf("goblin entry without %s: %v", f, e)
			}
		}
	}
}

// redis-cli authenticates as an ACL user and is refused what the user
// may not run.
func TestACLWithRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	g := StartGoblind(t, NodeOptions{})
	port := strconv.Itoa(portOf(t, g.Addr))
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(cli, append([]string{"-h", "127.0.0.1", "-p", port}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read"); got != "OK" {
		t.Fatal(got)
	}
	run("ZADD", "k", "1", "a")
	if got := run("--user", "reader", "--pass", "pw", "--no-auth-warning", "ZRANGE", "k", "0", "-1"); got != "a" {
		t.Fatalf("reader ZRANGE: %q", got)
	}
	if got := run("--user", "reader", "--pass", "pw", "--no-auth-warning", "ZADD", "k", "2", "b"); got != "NOPERM User reader has no permissions to run the 'zadd' command" {
		t.Fatalf("reader ZADD: %q", got)
	}
	if got := run("--user", "reader", "--pass", "nope", "--no-auth-warning", "PING"); !strings.Contains(got, "WRONGPASS") {
		t.Fatalf("wrong password: %q", got)
	}
}
