package acl

import (
	"strings"
	"testing"

	"github.com/goblindb/goblin/command"
)

func argv(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// check runs User.Check the way the RESP edge does.
func check(u *User, cmd string) (Reason, int) {
	a := argv(cmd)
	m := command.LookupMeta(string(a[0]))
	if m == nil {
		panic("no command " + cmd)
	}
	var keys []command.KeyRef
	return u.Check(command.MetaFor(m, a), a, &keys)
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		rules string
		cmd   string
		want  Reason
		pos   int
	}{
		{"", "zadd k 1 a", DeniedCommand, 0},
		{"+zadd", "zadd k 1 a", DeniedKey, 1},
		{"+zadd ~k*", "zadd k 1 a", Allowed, 0},
		{"+zadd ~k*", "zadd x 1 a", DeniedKey, 1},
		{"+@sortedset -zadd allkeys", "zadd k 1 a", DeniedCommand, 0},
		{"+@sortedset -zadd allkeys", "zrange k 0 1", Allowed, 0},
		// ZADD's key is RW+update: a write, not a read.
		{"+zadd %W~k", "zadd k 1 a", Allowed, 0},
		{"+zadd %R~k", "zadd k 1 a", DeniedKey, 1},
		{"+zrange %R~k", "zrange k 0 1", Allowed, 0},
		{"+zrange %W~k", "zrange k 0 1", DeniedKey, 1},
		// ZRANGESTORE writes its first key and reads its second.
		{"+zrangestore %W~d %R~s", "zrangestore d s 0 1", Allowed, 0},
		{"+zrangestore %W~d %W~s", "zrangestore d s 0 1", DeniedKey, 2},
		{"+zrangestore %R~d %R~s", "zrangestore d s 0 1", DeniedKey, 1},
		// BZPOPMIN reads and deletes: both permissions.
		{"+bzpopmin %R~a", "bzpopmin a 0", DeniedKey, 1},
		{"+bzpopmin %RW~a", "bzpopmin a 0", Allowed, 0},
		// Subcommands.
		{"+@all -config|set", "config get x", Allowed, 0},
		{"+@all -config|set", "config set x y", DeniedCommand, 0},
		{"-@all +config|get", "config set x y", DeniedCommand, 0},
		{"-@all +config|get", "config get x", Allowed, 0},
		{"-@all +client", "client id", Allowed, 0},
		// First arguments.
		{"-@all +select|0", "select 0", Allowed, 0},
		{"-@all +select|0", "select 1", DeniedCommand, 0},
		// AUTH and HELLO need no permission.
		{"-@all", "auth a b", Allowed, 0},
		{"-@all", "hello 3", Allowed, 0},
		// Selectors widen: one allowing is enough; among denials the
		// later key wins, and a key denial over a command one.
		{"+zadd ~a (+zrange ~b)", "zrange b 0 1", Allowed, 0},
		{"+zadd ~a (+zrange ~b)", "zrange a 0 1", DeniedKey, 1},
		{"+zadd ~a (+zrange ~b)", "zcard a", DeniedCommand, 0},
		{"+zunionstore ~d (+zunionstore ~a ~d)", "zunionstore d 2 a b", DeniedKey, 4},
		{"allcommands allkeys", "flushall", Allowed, 0},
	} {
		u, err := SetUser(nil, "u", strings.Fields(tc.rules))
		if err != nil {
			t.Fatalf("%q: %v", tc.rules, err)
		}
		r, pos := check(u, tc.cmd)
		if r != tc.want || pos != tc.pos {
			t.Errorf("%q running %q: %v at %d, want %v at %d", tc.rules, tc.cmd, r, pos, tc.want, tc.pos)
		}
	}
}

func TestUnrestricted(t *testing.T) {
	if !NewDefaultUser().Unrestricted() {
		t.Error("the default user is restricted")
	}
	u, _ := SetUser(NewDefaultUser(), DefaultUser, []string{"-flushall"})
	if u.Unrestricted() {
		t.Error("a user denied FLUSHALL is unrestricted")
	}
	if r, _ := check(u, "flushall"); r != DeniedCommand {
		t.Errorf("flushall: %v", r)
	}
	if r, _ := check(u, "zadd k 1 a"); r != Allowed {
		t.Errorf("zadd: %v", r)
	}
}

func TestDenialMessage(t *testing.T) {
	for _, tc := range []struct {
		r       Reason
		verbose bool
		want    string
	}{
		{DeniedCommand, false, "User bob has no permissions to run the 'client|kill' command"},
		{DeniedKey, false, "No permissions to access a key"},
		{DeniedKey, true, "User bob has no permissions to access the 'k' key"},
		{DeniedChannel, false, "No permissions to access a channel"},
		{DeniedChannel, true, "User bob has no permissions to access the 'k' channel"},
	} {
		if got := DenialMessage(tc.r, "bob", "client|kill", "k", tc.verbose); got != tc.want {
			t.Errorf("%v %v: %q", tc.r, tc.verbose, got)
		}
	}
}

// The check allocates nothing once its key scratch space has grown.
func TestCheckAllocs(t *testing.T) {
	u, _ := SetUser(nil, "u", []string{"+zadd", "+zrange", "~k*"})
	a := argv("zadd k 1 a")
	m := command.LookupMeta("zadd")
	var keys []command.KeyRef
	u.Check(m, a, &keys)
	if n := testing.AllocsPerRun(100, func() { u.Check(m, a, &keys) }); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}

func BenchmarkCheck(b *testing.B) {
	restricted, _ := SetUser(nil, "u", []string{"+@sortedset", "~k*", "~j*"})
	for _, bc := range []struct {
		name string
		u    *User
	}{{"unrestricted", NewDefaultUser()}, {"keys", restricted}} {
		b.Run(bc.name, func(b *testing.B) {
			a := argv("zadd k:1 1 a")
			m := command.LookupMeta("zadd")
			var keys []command.KeyRef
			for range b.N {
				if r, _ := bc.u.Check(m, a, &keys); r != Allowed {
					b.Fatal(r)
				}
			}
		})
	}
}
