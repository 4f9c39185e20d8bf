package command

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/rdb"
)

// bulkOf extracts a bulk string reply's content.
func bulkOf(t *testing.T, reply string) string {
	t.Helper()
	if !strings.HasPrefix(reply, "$") {
		t.Fatalf("reply %q is not a bulk string", reply)
	}
	i := strings.Index(reply, "\r\n")
	n, _ := strconv.Atoi(reply[1:i])
	return reply[i+2 : i+2+n]
}

func TestDumpRestoreRoundTrip(t *testing.T) {
	f := newFixture(2)
	for _, n := range []int{1, 128, 129, 1000} {
		args := []string{"ZADD", "src"}
		for i := range n {
			args = append(args, strconv.Itoa(i%7)+".25", "m"+strconv.Itoa(i))
		}
		f.do("DEL", "src", "dst")
		f.do(args...)
		p := bulkOf(t, f.do("DUMP", "src"))
		if got := f.do("RESTORE", "dst", "0", p); got != "+OK\r\n" {
			t.Fatalf("n=%d: RESTORE = %q", n, got)
		}
		want := f.do("ZRANGE", "src", "0", "-1", "WITHSCORES")
		if got := f.do("ZRANGE", "dst", "0", "-1", "WITHSCORES"); got != want {
			t.Fatalf("n=%d: restored %q, want %q", n, got, want)
		}
		if got := bulkOf(t, f.do("DUMP", "dst")); got != p {
			t.Fatalf("n=%d: DUMP of the restored set differs", n)
		}
	}
	if got := f.do("DUMP", "nosuchkey"); got != "$-1\r\n" {
		t.Fatalf("DUMP of a missing key = %q", got)
	}
}

func TestRestoreErrors(t *testing.T) {
	f := newFixture(2)
	f.do("ZADD", "src", "1", "a")
	p := bulkOf(t, f.do("DUMP", "src"))
	bad := []byte(p)
	bad[3] ^= 1
	str := []byte{0, 1, 'x', 11, 0}
	str = binary.LittleEndian.AppendUint64(str, rdb.CRC64(0, str))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"RESTORE", "src", "0", p}, "-BUSYKEY Target key name already exists.\r\n"},
		{[]string{"RESTORE", "k", "0", string(bad)}, "-ERR DUMP payload version or checksum are wrong\r\n"},
		{[]string{"RESTORE", "k", "0", "short"}, "-ERR DUMP payload version or checksum are wrong\r\n"},
		{[]string{"RESTORE", "k", "0", string(str)}, "-ERR Bad data format\r\n"},
		{[]string{"RESTORE", "k", "-1", p}, "-ERR Invalid TTL value, must be >= 0\r\n"},
		{[]string{"RESTORE", "k", "x", p}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"RESTORE", "k", "0", p, "FOO"}, "-ERR syntax error\r\n"},
		{[]string{"RESTORE", "k", "0", p, "IDLETIME"}, "-ERR syntax error\r\n"},
		{[]string{"RESTORE", "k", "0", p, "IDLETIME", "-1"}, "-ERR Invalid IDLETIME value, must be >= 0\r\n"},
		{[]string{"RESTORE", "k", "0", p, "FREQ", "256"}, "-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n"},
		{[]string{"RESTORE", "k", "0", p, "FREQ", "1", "IDLETIME", "1"}, "-ERR syntax error\r\n"},
		{[]string{"RESTORE", "k", "0", p, "IDLETIME", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"RESTORE", "k", "0", p, "IDLETIME", "5", "REPLACE", "ABSTTL"}, "+OK\r\n"},
		{[]string{"RESTORE", "k", "0", p, "REPLACE", "FREQ", "255"}, "+OK\r\n"},
		{[]string{"RESTORE-ASKING", "k2", "0", p}, "+OK\r\n"},
		{[]string{"EXISTS", "k", "k2"}, ":2\r\n"},
	} {
		if got := f.do(c.args...); got != c.want {
			t.Errorf("%v = %q, want %q", c.args[:min(len(c.args), 3)], got, c.want)
		}
	}
}

func TestRestoreTTL(t *testing.T) {
	f := newFixture(2)
	f.do("ZADD", "src", "1", "a")
	p := bulkOf(t, f.do("DUMP", "src"))
	f.do("RESTORE", "rel", "5000", p)
	if got := f.do("PTTL", "rel"); got != ":5000\r\n" {
		t.Fatalf("PTTL after a relative TTL = %q", got)
	}
	at := strconv.FormatInt(f.now+10_000, 10)
	f.do("RESTORE", "abs", at, p, "ABSTTL")
	if got := f.do("PEXPIRETIME", "abs"); got != ":"+at+"\r\n" {
		t.Fatalf("PEXPIRETIME after ABSTTL = %q", got)
	}
	// Already expired: OK, nothing stored, and REPLACE deletes the old key.
	past := strconv.FormatInt(f.now-1, 10)
	if got := f.do("RESTORE", "gone", past, p, "ABSTTL"); got != "+OK\r\n" {
		t.Fatalf("expired RESTORE = %q", got)
	}
	if got := f.do("RESTORE", "src", strconv.FormatInt(f.now, 10), p, "ABSTTL", "REPLACE"); got != "+OK\r\n" {
		t.Fatalf("expired RESTORE REPLACE = %q", got)
	}
	if got := f.do("EXISTS", "gone", "src"); got != ":0\r\n" {
		t.Fatalf("EXISTS after expired restores = %q", got)
	}
}

func TestRestorePackedRules(t *testing.T) {
	f := newFixture(2)
	l, _ := packed.ParseLayout("int64:float64")
	f.ks.SetRules(keyspace.Rules{{Pattern: "ids:*", Layout: l}})
	f.do("ZADD", "src", "1", "10", "2", "9", "2.5", "-3")
	p := bulkOf(t, f.do("DUMP", "src"))
	if got := f.do("RESTORE", "ids:a", "0", p); got != "+OK\r\n" {
		t.Fatalf("RESTORE into a packed key = %q", got)
	}
	if got := f.ks.DB(0).Peek([]byte("ids:a")).Z.Layout(); got != l {
		t.Fatalf("layout %v, want %v", got, l)
	}
	if got, want := f.do("ZRANGE", "ids:a", "0", "-1", "WITHSCORES"), f.do("ZRANGE", "src", "0", "-1", "WITHSCORES"); got != want {
		t.Fatalf("restored %q, want %q", got, want)
	}
	f.do("ZADD", "names", "1", "alice")
	p = bulkOf(t, f.do("DUMP", "names"))
	if got := f.do("RESTORE", "ids:b", "0", p); got != "-"+ErrPackedMember.Error()+"\r\n" {
		t.Fatalf("RESTORE of names into a packed key = %q", got)
	}
	if got := f.do("EXISTS", "ids:b"); got != ":0\r\n" {
		t.Fatal("refused RESTORE stored a key")
	}
}

func TestRestoreDuplicateMembers(t *testing.T) {
	// A ZSET_2 payload naming a member twice: Redis refuses it.
	body := []byte{5, 2, 1, 'a'}
	body = binary.LittleEndian.AppendUint64(body, 0)
	body = append(body, 1, 'a')
	body = binary.LittleEndian.AppendUint64(body, 0)
	body = append(body, 11, 0)
	body = binary.LittleEndian.AppendUint64(body, rdb.CRC64(0, body))
	f := newFixture(2)
	if got := f.do("RESTORE", "k", "0", string(body)); got != "-ERR Bad data format\r\n" {
		t.Fatalf("RESTORE with a duplicate = %q", got)
	}
}
