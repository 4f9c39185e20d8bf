package resp

import (
	"fmt"
	"testing"
	"time"

	"github.com/goblindb/goblin/node"
)

// Many clients blocked in WAIT cost one look at the replicas a poll, not
// one each; each is answered once its count is reached, with the count.
func TestWaitersShareOneLook(t *testing.T) {
	fb := &replicaFake{fakeBackend: newFakeBackend()}
	fb.reps = node.Replicas{Majority: 1, Others: 2, Alive: 2}
	s := serveBackend(t, Config{}, fb)

	const clients = 100
	cs := make([]*conn, clients)
	for i := range cs {
		cs[i] = dial(t, s)
		if got := cs[i].do("ZADD", "k", "1", fmt.Sprint(i)); got != ":1\r\n" {
			t.Fatalf("ZADD: %q", got)
		}
		// The majority answers at once.
		if got := cs[i].do("WAIT", "1", "0"); got != ":1\r\n" {
			t.Fatalf("WAIT 1 0: %q", got)
		}
		cs[i].send(encode("WAIT", "2", "0"))
	}
	// Every WAIT 2 0 blocked, and a few polls.
	for deadline := time.Now().Add(10 * time.Second); fb.set(fb.reps) < 2*clients+5; time.Sleep(waitPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, %d looks at the replicas", fb.set(fb.reps))
		}
	}
	start := fb.set(fb.reps)
	time.Sleep(20 * waitPoll)
	// Each poll looks once for all: at most one look a poll, with room
	// for polls the ticker fires late.
	if looks := fb.set(fb.reps) - start; looks > 25 {
		t.Fatalf("%d looks at the replicas in 20 polls with %d clients waiting", looks, clients)
	}
	// Every client's write reported by both followers: all answered 2.
	fb.set(node.Replicas{Majority: 1, Others: 2, Alive: 2, Applied: []uint64{clients, clients}})
	for i, c := range cs {
		if got := c.read(); got != ":2\r\n" {
			t.Fatalf("client %d: WAIT 2 0 answered %q", i, got)
		}
	}
}

// A WAIT pipelined behind a write counts that write; a timeout too long
// for a Duration waits (it does not end at once).
func TestWaitCountsPipelinedWrite(t *testing.T) {
	fb := &replicaFake{fakeBackend: newFakeBackend()}
	// Nothing alive: a WAIT that counted no write would find none.
	fb.reps = node.Replicas{Majority: 1, Others: 2}
	s := serveBackend(t, Config{}, fb)
	c := dial(t, s)
	c.send(append(encode("ZADD", "k", "1", "a"), encode("WAIT", "1", "0")...))
	if got := c.read() + c.read(); got != ":1\r\n:1\r\n" {
		t.Fatalf("ZADD and WAIT 1 0 in one pipeline: %q", got)
	}
	c.send(encode("WAIT", "2", "9223372036855"))
	c.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.rd.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("WAIT 2 with a timeout past 292 years answered at once")
	}
	fb.set(node.Replicas{Majority: 1, Others: 2, Applied: []uint64{1, 1}})
	if got := c.read(); got != ":2\r\n" {
		t.Fatalf("WAIT 2 once both report the write: %q", got)
	}
}
