package resp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/node"
)

// TestPipelinedWritesShareAnEntry: a client's consecutive pipelined writes
// go to the log as one OpBatch entry, their replies (errors included)
// come back in order, and a read or an invalid write between them splits
// the run.
func TestPipelinedWritesShareAnEntry(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	steps := []exchange{
		{[]string{"ZADD", "k", "1", "a"}, ":1\r\n"},
		{[]string{"ZINCRBY", "k", "+inf", "a"}, "$3\r\ninf\r\n"},
		{[]string{"ZINCRBY", "k", "-inf", "a"}, "-ERR resulting score is not a number (NaN)\r\n"},
		{[]string{"ZADD", "k", "2", "b"}, ":1\r\n"},
		{[]string{"ZADD", "k", "x", "c"}, "-ERR value is not a valid float\r\n"}, // refused at the edge
		{[]string{"ZADD", "k", "3", "c"}, ":1\r\n"},
		{[]string{"ZADD", "k", "4", "d"}, ":1\r\n"},
		{[]string{"ZCARD", "k"}, ":4\r\n"},
		{[]string{"ZADD", "k", "5", "e"}, ":1\r\n"},
	}
	var batch []byte
	var want strings.Builder
	for _, st := range steps {
		batch = append(batch, encode(st.argv...)...)
		want.WriteString(st.want)
	}
	c.send(batch)
	var got strings.Builder
	for range steps {
		got.WriteString(c.read())
	}
	if got.String() != want.String() {
		t.Fatalf("replies:\n got %q\nwant %q", got.String(), want.String())
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	var ops []string
	cmds := 0
	for _, e := range fb.entries {
		ops = append(ops, e.Op.String()+"/"+strconv.Itoa(len(e.Commands)))
		cmds += len(e.Commands)
	}
	if cmds != 7 {
		t.Fatalf("log holds %d commands (%v), want the 7 valid writes", cmds, ops)
	}
	if len(fb.entries) >= cmds {
		t.Fatalf("no two pipelined writes shared an entry: %v", ops)
	}
	if strings.Join(ops, " ") != "batch/4 batch/2 command/1" {
		t.Logf("entries %v (the batch arrived in pieces?)", ops)
	}
}

// TestFailedBatchAnswersEveryCommand: when the entry fails as a whole,
// each write in it gets the error.
func TestFailedBatchAnswersEveryCommand(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	fb.mu.Lock()
	fb.err = node.ErrUncertain
	fb.mu.Unlock()
	var batch []byte
	for i := range 5 {
		batch = append(batch, encode("ZADD", "k", "1", "m"+strconv.Itoa(i))...)
	}
	c.send(batch)
	for i := range 5 {
		if got := c.read(); !strings.HasPrefix(got, "-UNCERTAIN ") {
			t.Fatalf("reply %d = %q, want -UNCERTAIN", i, got)
		}
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after the failed batch PING = %q", got)
	}
}
