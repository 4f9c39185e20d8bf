package resp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// A write whose log entry the state machine recorded as failed is
// answered with an -ERR error: a single write, each write of a pipelined
// batch, an EXEC, and a write a follower forwarded (the failure crosses
// the forwarding wire as its sentinel).
func TestFailedEntryAnswersErr(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	// As raftfsm.FSM makes it.
	local := fmt.Errorf("%w (index 7): %w", raftfsm.ErrEntryFailed, raftfsm.ErrCorrupt)
	// As the node-to-node plane carries it: node.WireError's line.
	line, _ := node.WireError(local)
	forwarded := node.FromWire(line)
	if forwarded != raftfsm.ErrEntryFailed {
		t.Fatalf("the forwarding wire turns the failure into %v", forwarded)
	}
	for _, err := range []error{local, forwarded} {
		fb.mu.Lock()
		fb.err = err
		fb.mu.Unlock()
		want := "-ERR " + err.Error() + "\r\n"
		if got := c.do("ZADD", "k", "1", "a"); got != want {
			t.Fatalf("ZADD = %q, want %q", got, want)
		}
		c.send(append(encode("ZADD", "k", "1", "a"), encode("ZADD", "k", "2", "b")...))
		for i := range 2 {
			if got := c.read(); got != want {
				t.Fatalf("pipelined write %d = %q, want %q", i, got, want)
			}
		}
		run(t, c, []exchange{
			{[]string{"MULTI"}, "+OK\r\n"},
			{[]string{"ZADD", "k", "1", "a"}, "+QUEUED\r\n"},
			{[]string{"EXEC"}, want},
		})
	}
	fb.mu.Lock()
	fb.err = nil
	fb.mu.Unlock()
	if got := c.do("ZADD", "k", "1", "a"); got != ":1\r\n" {
		t.Fatalf("ZADD once entries apply again = %q", got)
	}
	if info := c.do("INFO", "persistence"); !strings.Contains(info, "\r\ngoblin_failed_log_entries:0\r\n") {
		t.Fatalf("INFO persistence lacks goblin_failed_log_entries: %q", info)
	}
}
