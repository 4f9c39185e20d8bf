package node

import (
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

func cmdEntry(op raftfsm.Op, cmds ...string) *raftfsm.Entry {
	e := &raftfsm.Entry{Op: op, Proto: 2, Time: time.Now().UnixMilli()}
	for _, c := range cmds {
		var argv [][]byte
		for _, a := range strings.Fields(c) {
			argv = append(argv, []byte(a))
		}
		e.Commands = append(e.Commands, raftfsm.Command{Argv: argv})
	}
	return e
}

// noGCLimit keeps the tests' maxmemory from setting the collector's soft
// limit of the test process (SetMaxMemory leaves it to GOMEMLIMIT when
// that is set).
func noGCLimit(t *testing.T) { t.Setenv("GOMEMLIMIT", "") }

// Over maxmemory, the leader refuses the writes that may grow memory,
// from its own clients and forwarded alike, and lets the others through;
// every node ends with the same state.
func TestMaxMemoryLeaderDecides(t *testing.T) {
	noGCLimit(t)
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	follower := tc.followers()[0]
	for _, n := range []*Node{leader, follower} {
		if _, err := n.Apply(zaddEntry("k", n.ID(), 1)); err != nil {
			t.Fatal(err)
		}
	}

	// A follower's own maxmemory decides nothing while it follows.
	follower.SetMaxMemory(1)
	if _, err := follower.Apply(zaddEntry("k", "f2", 2)); err != nil {
		t.Fatalf("a follower's maxmemory refused a write the leader takes: %v", err)
	}
	follower.SetMaxMemory(0)

	leader.SetMaxMemory(1) // any heap is above it
	for _, n := range []*Node{leader, follower} {
		for _, e := range []*raftfsm.Entry{
			zaddEntry("k", "new", 3),
			cmdEntry(raftfsm.OpCommand, "zincrby k 1 "+n.ID()),
			cmdEntry(raftfsm.OpCommand, "zrangestore copy k 0 -1"),
			cmdEntry(raftfsm.OpMulti, "zscore k a", "zadd k 1 x"),
			cmdEntry(raftfsm.OpBatch, "zadd k 1 y", "zadd k 1 z"),
		} {
			if _, err := n.Apply(e); !errors.Is(err, ErrOOM) {
				t.Fatalf("%s over maxmemory: %v %q: err %v, want ErrOOM", n.ID(), e.Op, e.Commands[0].Argv, err)
			}
		}
		res, err := n.Apply(cmdEntry(raftfsm.OpMulti, "zscore k "+n.ID(), "zrem k nothing"))
		if err != nil || string(res.Reply) != "*2\r\n$1\r\n1\r\n:0\r\n" {
			t.Fatalf("%s: a transaction that cannot grow memory: %q %v", n.ID(), res.Reply, err)
		}
	}
	// A pipeline mixing both: each command answered as Redis would.
	res, err := follower.Apply(cmdEntry(raftfsm.OpBatch,
		"zadd k 1 y", "zrem k "+leader.ID(), "zincrby k 1 y", "zadd k 1 z", "del copy", "zrem k "+follower.ID()))
	oom := "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
	if want := oom + ":1\r\n" + oom + oom + ":0\r\n:1\r\n"; err != nil || string(res.Reply) != want {
		t.Fatalf("mixed pipeline over maxmemory:\n got %q %v\nwant %q", res.Reply, err, want)
	}
	for _, n := range tc.all() {
		testutil.Poll(t, 5*time.Second, n.ID()+" caught up", func() bool { return n.AppliedIndex() >= res.Index })
		for m, want := range map[string]string{leader.ID(): "", follower.ID(): "", "f2": "2", "new": "", "x": "", "y": "", "z": ""} {
			if got := score(n, "k", m); got != want {
				t.Fatalf("%s: score of %s = %q, want %q", n.ID(), m, got, want)
			}
		}
	}

	// Writes resume once memory is under the limit again.
	leader.SetMaxMemory(math.MaxInt64)
	if _, err := follower.Apply(zaddEntry("k", "after", 5)); err != nil {
		t.Fatalf("under maxmemory again: %v", err)
	}
}

// maxmemory becomes the collector's soft limit, unless the environment
// sets GOMEMLIMIT.
func TestMaxMemorySetsGCLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	n := &Node{}
	n.SetMaxMemory(1 << 40)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("soft limit %d with maxmemory 1 TiB", got)
	}
	n.SetMaxMemory(0)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("soft limit %d without maxmemory", got)
	}
	noGCLimit(t)
	n.SetMaxMemory(1 << 41)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("soft limit %d with GOMEMLIMIT set", got)
	}
	if n.MaxMemory() != 1<<41 {
		t.Fatalf("MaxMemory = %d", n.MaxMemory())
	}
}
