package resp

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblindb/goblin/node"
)

// durableFake is a backend with replicas and a log whose durable index
// the test sets.
type durableFake struct {
	*replicaFake
	durable atomic.Uint64
}

func (d *durableFake) DurableIndex() uint64 { return d.durable.Load() }

// WAITAOF's arguments are checked in Redis 7.2's order and words, and a
// backend with no log refuses numlocal as Redis without appendonly does.
func TestWaitaofArguments(t *testing.T) {
	noLog := serveBackend(t, Config{}, &replicaFake{fakeBackend: newFakeBackend()})
	withLog := serveBackend(t, Config{}, &durableFake{replicaFake: &replicaFake{fakeBackend: newFakeBackend()}})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"2", "0", "0"}, "-ERR value is out of range, value must between 0 and 1\r\n"},
		{[]string{"-1", "0", "0"}, "-ERR value is out of range, value must between 0 and 1\r\n"},
		{[]string{"x", "0", "0"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"1", "-1", "0"}, "-ERR value is out of range, must be positive\r\n"},
		{[]string{"1", "x", "0"}, "-ERR value is out of range, must be positive\r\n"},
		{[]string{"1", "0", "-1"}, "-ERR timeout is negative\r\n"},
		{[]string{"1", "0", "x"}, "-ERR timeout is not an integer or out of range\r\n"},
		{[]string{"1", "0"}, "-ERR wrong number of arguments for 'waitaof' command\r\n"},
	} {
		for _, s := range []*Server{noLog, withLog} {
			args := append([]string{"WAITAOF"}, tc.args...)
			if got := dial(t, s).do(args...); got != tc.want {
				t.Errorf("%v: %q, want %q", args, got, tc.want)
			}
		}
	}
	c := dial(t, noLog)
	if got, want := c.do("WAITAOF", "1", "0", "0"), "-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n"; got != want {
		t.Errorf("WAITAOF 1 0 0 without a log: %q, want %q", got, want)
	}
	if got := c.do("WAITAOF", "0", "0", "0"); got != "*2\r\n:0\r\n:0\r\n" {
		t.Errorf("WAITAOF 0 0 0 without a log: %q", got)
	}
}

// WAITAOF blocks until this node's log holds the connection's last write
// durably and enough others reported theirs do, answering both counts;
// on timeout, or inside a transaction, it answers the counts it has.
func TestWaitaofWaitsForDurableCopies(t *testing.T) {
	fb := &durableFake{replicaFake: &replicaFake{fakeBackend: newFakeBackend()}}
	// Two others, one of them a voter that never reported: the majority
	// does not count towards durable copies.
	fb.reps = node.Replicas{Majority: 1, Others: 2, Alive: 2}
	s := serveBackend(t, Config{}, fb)
	c := dial(t, s)
	if got := c.do("WAITAOF", "1", "2", "0"); got != "*2\r\n:1\r\n:2\r\n" {
		t.Fatalf("WAITAOF 1 2 0 before any write: %q", got)
	}
	c.send(append(encode("ZADD", "k", "1", "a"), encode("WAITAOF", "1", "0", "0")...))
	if got := c.read(); got != ":1\r\n" {
		t.Fatalf("ZADD: %q", got)
	}
	c.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.rd.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("WAITAOF 1 0 0 answered before the write was durable here")
	}
	c.c.SetReadDeadline(time.Time{})
	fb.durable.Store(1)
	if got := c.read(); got != "*2\r\n:1\r\n:0\r\n" {
		t.Fatalf("WAITAOF 1 0 0 once the log holds the write: %q", got)
	}
	// The others hold it (applied) but have not reported it durable.
	fb.set(node.Replicas{Majority: 1, Others: 2, Alive: 2, Applied: []uint64{1, 1}, Durable: []uint64{0, 0}})
	if got := c.do("WAITAOF", "0", "1", "50"); got != "*2\r\n:1\r\n:0\r\n" {
		t.Fatalf("WAITAOF 0 1 50 with no durable report: %q", got)
	}
	c.send(encode("WAITAOF", "1", "2", "0"))
	time.Sleep(3 * waitPoll)
	fb.set(node.Replicas{Majority: 1, Others: 2, Alive: 2, Applied: []uint64{1, 1}, Durable: []uint64{1, 0}})
	time.Sleep(3 * waitPoll)
	fb.set(node.Replicas{Majority: 1, Others: 2, Alive: 2, Applied: []uint64{1, 1}, Durable: []uint64{1, 1}})
	if got := c.read(); got != "*2\r\n:1\r\n:2\r\n" {
		t.Fatalf("WAITAOF 1 2 0 once both report the write durable: %q", got)
	}
	// Every other voter syncing always: the majority counts at once.
	fb.set(node.Replicas{Majority: 1, MajorityDurable: 1, Others: 2, Alive: 2})
	if got := c.do("ZADD", "k", "2", "b"); got != ":1\r\n" {
		t.Fatalf("ZADD: %q", got)
	}
	if got := c.do("WAITAOF", "0", "1", "0"); got != "*2\r\n:0\r\n:1\r\n" {
		t.Fatalf("WAITAOF 0 1 0 with the majority durable: %q", got)
	}
	// In a transaction it never blocks.
	for _, cmd := range [][]string{{"MULTI"}, {"WAITAOF", "1", "2", "0"}} {
		c.do(cmd...)
	}
	if got := c.do("EXEC"); got != "*1\r\n*2\r\n:0\r\n:1\r\n" {
		t.Fatalf("WAITAOF 1 2 0 in a transaction: %q", got)
	}
}
