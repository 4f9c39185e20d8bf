package resp

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
)

// The fake backend's state machine keeps the replicated users.
func (f *fakeBackend) ACLUsers() *acl.Users               { return f.a.ACLUsers() }
func (f *fakeBackend) ACLConfigDigest(node string) string { return f.a.ACLConfigDigest(node) }
func (f *fakeBackend) OnACLChange(fn func(*acl.Users, []string)) {
	f.a.OnACLChange(fn)
}

const (
	wrongPass = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	ok        = "+OK\r\n"
)

// AUTH, HELLO AUTH and ACL WHOAMI with users; names are case-sensitive
// and failures are logged.
func TestACLAuth(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ACL", "WHOAMI"}, "$7\r\ndefault\r\n"},
		{[]string{"AUTH", "x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{[]string{"ACL", "SETUSER", "alice", ">pw"}, ok},
		{[]string{"AUTH", "alice", "pw"}, wrongPass}, // off
		{[]string{"ACL", "SETUSER", "alice", "on", "+acl", "+client"}, ok},
		{[]string{"AUTH", "Alice", "pw"}, wrongPass},
		{[]string{"AUTH", "alice", "nope"}, wrongPass},
		{[]string{"AUTH", "DEFAULT", ""}, wrongPass},
		{[]string{"AUTH", "alice", "pw"}, ok},
		{[]string{"ACL", "WHOAMI"}, "$5\r\nalice\r\n"},
		{[]string{"HELLO", "2", "AUTH", "alice", "nope"}, wrongPass},
		{[]string{"ACL", "WHOAMI"}, "$5\r\nalice\r\n"},
		{[]string{"AUTH", "default", "whatever"}, ok},
		{[]string{"ACL", "LOG", "RESET"}, ok},
	})
	c.do("AUTH", "bob", "x")
	c.do("AUTH", "bob", "x")
	log := c.do("ACL", "LOG")
	for _, want := range []string{"$5\r\ncount\r\n:2\r\n", "$6\r\nreason\r\n$4\r\nauth\r\n", "$7\r\ncontext\r\n$8\r\ntoplevel\r\n",
		"$6\r\nobject\r\n$4\r\nAUTH\r\n", "$8\r\nusername\r\n$3\r\nbob\r\n", "$8\r\nentry-id\r\n:"} {
		if !strings.Contains(log, want) {
			t.Errorf("ACL LOG lacks %q:\n%q", want, log)
		}
	}
	if list := c.do("CLIENT", "LIST"); !strings.Contains(list, " user=default ") {
		t.Errorf("CLIENT LIST: %q", list)
	}
	c.do("AUTH", "alice", "pw")
	if list := c.do("CLIENT", "LIST"); !strings.Contains(list, " user=alice ") {
		t.Errorf("CLIENT LIST: %q", list)
	}
}

// NOPERM replies are Redis's, byte for byte; a denial in MULTI dooms the
// transaction.
func TestACLPermissions(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ACL", "SETUSER", "u", "on", "nopass", "+@sortedset", "-zadd", "%R~r*", "~w*", "+multi", "+exec", "+config|get"}, ok},
		{[]string{"AUTH", "u", "x"}, ok},
		{[]string{"ZADD", "w", "1", "a"}, "-NOPERM User u has no permissions to run the 'zadd' command\r\n"},
		{[]string{"ZRANGE", "r", "0", "-1"}, "*0\r\n"},
		{[]string{"ZRANGE", "x", "0", "-1"}, "-NOPERM No permissions to access a key\r\n"},
		{[]string{"ZRANGESTORE", "r2", "r", "0", "-1"}, "-NOPERM No permissions to access a key\r\n"},
		{[]string{"ZRANGESTORE", "w", "r", "0", "-1"}, ":0\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory"}, "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1"}, "-NOPERM User u has no permissions to run the 'config|set' command\r\n"},
		{[]string{"PING"}, "-NOPERM User u has no permissions to run the 'ping' command\r\n"},
		// Unknown commands and wrong arities are answered first.
		{[]string{"NOSUCH"}, "-ERR unknown command 'NOSUCH', with args beginning with: \r\n"},
		{[]string{"ZADD", "w"}, "-ERR wrong number of arguments for 'zadd' command\r\n"},
		{[]string{"MULTI"}, ok},
		{[]string{"ZCARD", "w"}, "+QUEUED\r\n"},
		{[]string{"ZADD", "w", "1", "a"}, "-NOPERM User u has no permissions to run the 'zadd' command\r\n"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{[]string{"AUTH", "default", ""}, ok},
	})
	log := c.do("ACL", "LOG", "1")
	if !strings.Contains(log, "$7\r\ncontext\r\n$5\r\nmulti\r\n") || !strings.Contains(log, "$6\r\nobject\r\n$4\r\nzadd\r\n") {
		t.Errorf("ACL LOG: %q", log)
	}
}

// EXEC checks the queued commands again; one no longer allowed answers
// an error in its place and does not run.
func TestACLExecChecksAgain(t *testing.T) {
	s, fb := startServer(t, Config{})
	admin, c := dial(t, s), dial(t, s)
	admin.do("ACL", "SETUSER", "u", "on", "nopass", "+@all", "~*")
	run(t, c, []exchange{
		{[]string{"AUTH", "u", "x"}, ok},
		{[]string{"MULTI"}, ok},
		{[]string{"ZADD", "k", "1", "a"}, "+QUEUED\r\n"},
		{[]string{"ZCARD", "k"}, "+QUEUED\r\n"},
	})
	if got := admin.do("ACL", "SETUSER", "u", "-zadd"); got != ok {
		t.Fatal(got)
	}
	run(t, c, []exchange{
		{[]string{"EXEC"}, "*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n:0\r\n"},
	})
	var n int
	fb.View(func(ks *keyspace.Keyspace, now int64) { n = ks.DB(0).Len() })
	if n != 0 {
		t.Fatalf("the denied ZADD ran: %d keys", n)
	}
}

// A blocked command is checked again when it runs again.
func TestACLBlockedCommandChecksAgain(t *testing.T) {
	s, _ := startServer(t, Config{})
	admin, c := dial(t, s), dial(t, s)
	admin.do("ACL", "SETUSER", "u", "on", "nopass", "+@all", "~*")
	c.do("AUTH", "u", "x")
	c.send(encode("BZPOPMIN", "k", "0"))
	waitBlocked(t, s, 1)
	if got := admin.do("ACL", "SETUSER", "u", "resetkeys"); got != ok {
		t.Fatal(got)
	}
	admin.do("ZADD", "k", "1", "a")
	if got := c.read(); got != "-NOPERM No permissions to access a key\r\n" {
		t.Fatalf("unblocked: %q", got)
	}
	if got := admin.do("ZCARD", "k"); got != ":1\r\n" {
		t.Fatalf("the denied pop ran: %q", got)
	}
}

func waitBlocked(t *testing.T, s *Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.blocked.count.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients blocked, want %d", s.blocked.count.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// expectClosed asserts the server closes c (reads end).
func expectClosed(t *testing.T, c *conn) {
	t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.rd.ReadByte(); err == nil {
		t.Fatal("the connection is still open")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was not closed")
	}
}

// Deleting a user closes its connections (after the reply, for the
// connection that deletes itself); ACL LOAD closes every non-default
// user's.
func TestACLDeleteClosesConnections(t *testing.T) {
	s, _ := startServer(t, Config{})
	admin, bob, self := dial(t, s), dial(t, s), dial(t, s)
	admin.do("ACL", "SETUSER", "bob", "on", "nopass", "+@all", "~*")
	admin.do("ACL", "SETUSER", "self", "on", "nopass", "+@all", "~*")
	bob.do("AUTH", "bob", "x")
	self.do("AUTH", "self", "x")
	// A blocked connection is closed too.
	bob.send(encode("BZPOPMIN", "k", "0"))
	waitBlocked(t, s, 1)
	if got := admin.do("ACL", "DELUSER", "bob", "nobody"); got != ":1\r\n" {
		t.Fatal(got)
	}
	expectClosed(t, bob)
	// The rest of a pipeline after the command does not run.
	self.send(append(encode("ACL", "DELUSER", "self"), encode("ZADD", "k", "1", "a")...))
	if got := self.read(); got != ":1\r\n" {
		t.Fatalf("reply %q", got)
	}
	expectClosed(t, self)
	if got := admin.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	if got := admin.do("ZCARD", "k"); got != ":0\r\n" {
		t.Fatalf("the command after DELUSER ran: %q", got)
	}
}

// requirepass is the default user's password, replicated once the node
// has synchronized its configuration; CONFIG SET changes it everywhere.
func TestACLRequirePass(t *testing.T) {
	s, fb := startServer(t, Config{RequirePass: "pw"})
	s.SyncACL()
	deadline := time.Now().Add(5 * time.Second)
	for fb.ACLUsers() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the configuration was not replicated")
		}
		time.Sleep(time.Millisecond)
	}
	if !fb.ACLUsers().Default().CheckPassword([]byte("pw")) {
		t.Fatal("replicated default user without the password")
	}
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "pw"}, ok},
		{[]string{"ACL", "LIST"}, "*1\r\n$110\r\nuser default on sanitize-payload #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~* &* +@all\r\n"},
		{[]string{"CONFIG", "SET", "requirepass", "new"}, ok},
		{[]string{"CONFIG", "GET", "requirepass"}, "*2\r\n$11\r\nrequirepass\r\n$3\r\nnew\r\n"},
	})
	if !fb.ACLUsers().Default().CheckPassword([]byte("new")) || fb.ACLUsers().Default().CheckPassword([]byte("pw")) {
		t.Fatal("CONFIG SET requirepass did not change the replicated password")
	}
	// The configuration is applied once: SyncACL again changes nothing.
	if err := s.syncACLOnce(s.acl.op); err != nil {
		t.Fatal(err)
	}
	if !fb.ACLUsers().Default().CheckPassword([]byte("new")) {
		t.Fatal("the configuration was applied again over CONFIG SET")
	}
	run(t, c, []exchange{{[]string{"CONFIG", "SET", "requirepass", ""}, ok}})
	if !fb.ACLUsers().Default().NoPass() {
		t.Fatal("requirepass \"\" left a password")
	}
}

// A change proposed before the node's configuration reached the state
// builds on that configuration, never on an open default user.
func TestACLChangeCarriesConfiguration(t *testing.T) {
	s, fb := startServer(t, Config{RequirePass: "pw"})
	c := dial(t, s)
	c.do("AUTH", "pw")
	if got := c.do("ACL", "SETUSER", "alice", "on"); got != ok {
		t.Fatal(got)
	}
	if fb.ACLUsers().Default().NoPass() {
		t.Fatal("the first change opened the default user")
	}
}

// ACL LOAD and SAVE work on the node's aclfile; a bad file changes
// nothing.
func TestACLFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(file, []byte("user default on nopass ~* &* +@all\nuser alice on >pw ~* +@all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	op, err := NewOperatorACL("", "", file)
	if err != nil {
		t.Fatal(err)
	}
	s, fb := startServer(t, Config{OperatorACL: op})
	c := dial(t, s)
	// Before the state has users, the node enforces its file.
	run(t, c, []exchange{{[]string{"AUTH", "alice", "pw"}, ok}})
	s.SyncACL()
	deadline := time.Now().Add(5 * time.Second)
	for fb.ACLUsers() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the aclfile was not replicated")
		}
		time.Sleep(time.Millisecond)
	}
	os.WriteFile(file, []byte("user bob +nosuch\n"), 0o644)
	admin := dial(t, s)
	run(t, admin, []exchange{
		{[]string{"ACL", "LOAD"}, "-ERR " + file + ":1: Error in applying operation '+nosuch': Unknown command or category name in ACL. WARNING: ACL errors detected, no change to the previously active ACL rules was performed\r\n"},
		{[]string{"ACL", "SETUSER", "carol", "on", ">x"}, ok},
		{[]string{"ACL", "SAVE"}, ok},
	})
	saved, _ := os.ReadFile(file)
	want := "user alice on sanitize-payload #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~* resetchannels +@all\n" +
		"user carol on sanitize-payload #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 resetchannels -@all\n" +
		"user default on nopass sanitize-payload ~* &* +@all\n"
	if string(saved) != want {
		t.Fatalf("saved:\n%s", saved)
	}
	os.WriteFile(file, []byte("user dave on nopass +@all\n"), 0o644)
	run(t, admin, []exchange{
		{[]string{"ACL", "LOAD"}, ok},
		{[]string{"ACL", "USERS"}, "*2\r\n$4\r\ndave\r\n$7\r\ndefault\r\n"},
	})
	// ACL LOAD closes the connections of every user but the default one.
	expectClosed(t, c)
	os.Remove(file)
	run(t, admin, []exchange{{[]string{"ACL", "LOAD"}, "-ERR Error loading ACLs, opening file '" + file + "': No such file or directory\r\n"}})
}

func TestACLGetUserAndDryRun(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	c.do("ACL", "SETUSER", "u", "on", "#34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6", "~a*", "%R~b*", "&ch", "+@sortedset", "(+zadd ~z*)")
	want := "*12\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$16\r\nsanitize-payload\r\n" +
		"$9\r\npasswords\r\n*1\r\n$64\r\n34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6\r\n" +
		"$8\r\ncommands\r\n$17\r\n-@all +@sortedset\r\n$4\r\nkeys\r\n$9\r\n~a* %R~b*\r\n$8\r\nchannels\r\n$3\r\n&ch\r\n" +
		"$9\r\nselectors\r\n*1\r\n*6\r\n$8\r\ncommands\r\n$11\r\n-@all +zadd\r\n$4\r\nkeys\r\n$3\r\n~z*\r\n$8\r\nchannels\r\n$0\r\n\r\n"
	run(t, c, []exchange{
		{[]string{"ACL", "GETUSER", "u"}, want},
		{[]string{"ACL", "GETUSER", "nobody"}, "$-1\r\n"},
		{[]string{"ACL", "DRYRUN", "u", "zadd", "z1", "1", "a"}, ok},
		{[]string{"ACL", "DRYRUN", "u", "zadd", "b1", "1", "a"}, "$48\r\nUser u has no permissions to access the 'b1' key\r\n"},
		{[]string{"ACL", "DRYRUN", "u", "ping"}, "$51\r\nUser u has no permissions to run the 'ping' command\r\n"},
		{[]string{"ACL", "DRYRUN", "u", "nosuch"}, "-ERR Command 'nosuch' not found\r\n"},
		{[]string{"ACL", "DRYRUN", "nobody", "ping"}, "-ERR User 'nobody' not found\r\n"},
		{[]string{"ACL", "DRYRUN", "u", "zadd", "k"}, "-ERR wrong number of arguments for 'zadd' command\r\n"},
	})
	if got := c.do("HELLO", "3"); !strings.HasPrefix(got, "%7") {
		t.Fatal(got)
	}
	if got := c.do("ACL", "GETUSER", "nobody"); got != "_\r\n" {
		t.Fatalf("RESP3 null: %q", got)
	}
	if got := c.do("ACL", "GETUSER", "u"); !strings.HasPrefix(got, "%6\r\n$5\r\nflags\r\n~2\r\n") {
		t.Fatalf("RESP3 GETUSER: %q", got)
	}
}

func TestCommandInfoCategories(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	got := c.do("COMMAND", "INFO", "flushall", "nosuch")
	want := "*2\r\n*10\r\n$8\r\nflushall\r\n:-1\r\n*1\r\n+write\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@keyspace\r\n+@write\r\n+@slow\r\n+@dangerous\r\n" +
		"*2\r\n$25\r\nrequest_policy:all_shards\r\n$29\r\nresponse_policy:all_succeeded\r\n*0\r\n*0\r\n$-1\r\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := c.do("COMMAND", "INFO", "goblin"); !strings.Contains(got, "goblin|remove\r\n:3\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n") ||
		!strings.Contains(got, "+@admin\r\n+@slow\r\n+@dangerous\r\n") {
		t.Fatalf("GOBLIN: %q", got)
	}
}

// A connection made while the node is still catching up with its log
// (its read barrier fails) is authenticated by the users the log holds,
// not by those in force when it connected: here the node runs without a
// password, its log sets one, and a connection made before the log was
// applied must not stay authenticated by the open default user.
func TestACLEarlyConnectionWaitsForTheLog(t *testing.T) {
	s, fb := startServer(t, Config{})
	fb.mu.Lock()
	fb.err = errors.New("no leader yet")
	fb.mu.Unlock()
	s.SyncACL()
	c := dial(t, s)
	answer := make(chan string, 1)
	go func() { answer <- c.do("PING") }()
	time.Sleep(200 * time.Millisecond) // the PING waits for the log
	// The log's ACL change is applied, then the barrier succeeds.
	fb.mu.Lock()
	fb.err = nil
	fb.mu.Unlock()
	set := &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: acl.DefaultUser, Rules: acl.HashRules(defaultPasswordRules("pw"))}}}}
	if _, err := fb.Propose(set)(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-answer:
		if got != "-NOAUTH Authentication required.\r\n" {
			t.Fatalf("PING on a connection made before the log was applied: %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	run(t, c, []exchange{{[]string{"AUTH", "pw"}, ok}, {[]string{"PING"}, "+PONG\r\n"}})
	// Connections made once the users are settled do not wait.
	if s.aclUnsettled() {
		t.Fatal("still unsettled")
	}
	run(t, dial(t, s), []exchange{{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"}})
}

// A node that cannot settle its users (no leader) holds connections made
// in its first aclSettleWait until then, and none after.
func TestACLSettleWaitEndsOnce(t *testing.T) {
	s, fb := startServer(t, Config{})
	fb.mu.Lock()
	fb.err = errors.New("no leader")
	fb.mu.Unlock()
	start := time.Now()
	s.SyncACL()
	run(t, dial(t, s), []exchange{{[]string{"PING"}, "+PONG\r\n"}})
	if waited := time.Since(start); waited < aclSettleWait {
		t.Fatalf("the first connection waited %v, less than %v", waited, aclSettleWait)
	}
	if !s.aclUnsettled() {
		t.Fatal("settled without a leader")
	}
	c := dial(t, s)
	start = time.Now()
	run(t, c, []exchange{{[]string{"PING"}, "+PONG\r\n"}})
	if waited := time.Since(start); waited >= aclSettleWait {
		t.Fatalf("a connection made after the wait waited %v again", waited)
	}
}
