package resp

import (
	"regexp"
	"strings"
	"testing"
)

const reset = "+RESET\r\n"

// clientField returns field's value in the connection's CLIENT INFO line.
func clientField(t *testing.T, c *conn, field string) string {
	t.Helper()
	m := regexp.MustCompile(` ` + field + `=(\S*)`).FindStringSubmatch(c.do("CLIENT", "INFO"))
	if m == nil {
		t.Fatalf("CLIENT INFO has no %s", field)
	}
	return m[1]
}

// RESET puts the connection back in database 0, RESP2, without a name
// or READONLY, as Redis 7.2 does; the library name and version stay.
func TestReset(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"RESET"}, reset},
		{[]string{"reset", "x"}, "-ERR wrong number of arguments for 'reset' command\r\n"},
		{[]string{"SELECT", "3"}, ok},
		{[]string{"ZADD", "k", "1", "a"}, ":1\r\n"},
		{[]string{"CLIENT", "SETNAME", "n1"}, ok},
		{[]string{"CLIENT", "SETINFO", "lib-name", "lib1"}, ok},
		{[]string{"CLIENT", "SETINFO", "lib-ver", "1.0"}, ok},
		{[]string{"READONLY"}, ok},
	})
	if f := clientField(t, c, "flags"); f != "r" {
		t.Fatalf("flags after READONLY = %q", f)
	}
	h := c.do("HELLO", "3")
	if !strings.HasPrefix(h, "%7\r\n") {
		t.Fatalf("HELLO 3 = %q", h)
	}
	run(t, c, []exchange{
		{[]string{"ZSCORE", "k", "b"}, "_\r\n"},
		{[]string{"RESET"}, reset},
		{[]string{"ZSCORE", "k", "b"}, "$-1\r\n"}, // RESP2 again
		{[]string{"ZCARD", "k"}, ":0\r\n"},        // database 0
		{[]string{"CLIENT", "GETNAME"}, "$-1\r\n"},
	})
	for field, want := range map[string]string{
		"db": "0", "resp": "2", "name": "", "flags": "N", "multi": "-1", "user": "default",
		"lib-name": "lib1", "lib-ver": "1.0",
	} {
		if got := clientField(t, c, field); got != want {
			t.Errorf("after RESET %s=%q, want %q", field, got, want)
		}
	}
	run(t, c, []exchange{
		{[]string{"SELECT", "3"}, ok},
		{[]string{"ZCARD", "k"}, ":1\r\n"},
	})
}

// Inside MULTI, RESET is not queued: it discards the transaction and its
// database; it unwatches the keys watched.
func TestResetTransaction(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	other := dial(t, s)
	run(t, c, []exchange{
		{[]string{"MULTI"}, ok},
		{[]string{"SELECT", "4"}, "+QUEUED\r\n"},
		{[]string{"ZADD", "k", "1", "a"}, "+QUEUED\r\n"},
		{[]string{"RESET"}, reset},
		{[]string{"EXEC"}, "-ERR EXEC without MULTI\r\n"},
		{[]string{"DISCARD"}, "-ERR DISCARD without MULTI\r\n"},
		{[]string{"ZCARD", "k"}, ":0\r\n"},
		// With a wrong arity it is refused, and dooms the transaction.
		{[]string{"MULTI"}, ok},
		{[]string{"RESET", "x"}, "-ERR wrong number of arguments for 'reset' command\r\n"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{[]string{"WATCH", "w"}, ok},
		{[]string{"RESET"}, reset},
	})
	if got := other.do("ZADD", "w", "1", "a"); got != ":1\r\n" {
		t.Fatalf("ZADD = %q", got)
	}
	run(t, c, []exchange{
		{[]string{"MULTI"}, ok},
		{[]string{"ZCARD", "w"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*1\r\n:1\r\n"}, // not watched any more
	})
}

// RESET makes the connection the default user's again: authenticated
// when that user needs no password, to authenticate again otherwise.
// Every user may run it, and so may a connection yet to authenticate.
func TestResetAuth(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all"}, ok},
		{[]string{"ACL", "SETUSER", "bob", "on", ">pw", "-@all"}, ok},
		{[]string{"AUTH", "alice", "pw"}, ok},
		{[]string{"ACL", "WHOAMI"}, "$5\r\nalice\r\n"},
		{[]string{"RESET"}, reset},
		{[]string{"ACL", "WHOAMI"}, "$7\r\ndefault\r\n"},
		{[]string{"AUTH", "bob", "pw"}, ok},
		{[]string{"PING"}, "-NOPERM User bob has no permissions to run the 'ping' command\r\n"},
		{[]string{"RESET"}, reset},
		{[]string{"PING"}, "+PONG\r\n"},
	})

	s2, _ := startServer(t, Config{RequirePass: "s3cret"})
	c2 := dial(t, s2)
	run(t, c2, []exchange{
		{[]string{"RESET"}, reset},
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "s3cret"}, ok},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"RESET"}, reset},
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"ACL", "WHOAMI"}, "-NOAUTH Authentication required.\r\n"},
	})
	if got := c2.do("HELLO", "3", "AUTH", "default", "s3cret"); !strings.HasPrefix(got, "%7\r\n") {
		t.Fatalf("HELLO 3 AUTH = %q", got)
	}
	run(t, c2, []exchange{
		{[]string{"RESET"}, reset},
		{[]string{"ZCARD", "k"}, "-NOAUTH Authentication required.\r\n"},
	})
}

// RESET ends MONITOR mode: the lines shown before it come first, none
// after it. Other monitors see it, in database 0.
func TestResetMonitor(t *testing.T) {
	s, _ := startServer(t, Config{})
	m := dial(t, s)
	watcher := dial(t, s)
	c := dial(t, s)
	if got := m.do("SELECT", "5"); got != ok {
		t.Fatalf("SELECT = %q", got)
	}
	if got := m.do("MONITOR"); got != ok {
		t.Fatalf("MONITOR = %q", got)
	}
	if got := watcher.do("MONITOR"); got != ok {
		t.Fatalf("MONITOR = %q", got)
	}
	const n = 200
	for range n {
		c.do("PING")
	}
	m.send(encode("RESET"))
	for i := range n {
		if got := m.read(); !strings.HasSuffix(got, `] "PING"`+"\r\n") {
			t.Fatalf("line %d before RESET's reply: %q", i, got)
		}
	}
	if got := m.read(); got != reset {
		t.Fatalf("RESET = %q", got)
	}
	c.do("ZADD", "k", "1", "a")
	// The next reply is PING's: no line came for the ZADD.
	if got := m.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after RESET = %q", got)
	}
	if f := clientField(t, m, "flags"); f != "N" {
		t.Errorf("flags after RESET = %q", f)
	}
	// The other monitor saw the RESET, in database 0 (after it ran), and
	// still sees commands.
	for i := 0; ; i++ {
		line := watcher.read()
		if strings.HasSuffix(line, `"RESET"`+"\r\n") {
			if !strings.Contains(line, " [0 ") {
				t.Errorf("RESET's line = %q", line)
			}
			break
		}
		if i > n+10 {
			t.Fatalf("the other monitor did not see RESET; last line %q", line)
		}
	}
	if got := watcher.read(); !strings.HasSuffix(got, `] "ZADD" "k" "1" "a"`+"\r\n") {
		t.Errorf("the other monitor's line after RESET's = %q", got)
	}
}
