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

// TestGatheredWritesBoundedBySize: pipelined writes share a log entry
// only while their arguments stay under maxGatheredBytes together, so
// large writes that each fit an entry never make one too large; every
// write is still answered, in order.
func TestGatheredWritesBoundedBySize(t *testing.T) {
	old := maxGatheredBytes
	maxGatheredBytes = 8 << 10
	t.Cleanup(func() { maxGatheredBytes = old })
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	const writes = 100
	member := strings.Repeat("m", 1000)
	var req []byte
	for i := range writes {
		req = append(req, encode("ZADD", "k", strconv.Itoa(i), strconv.Itoa(i)+member)...)
	}
	fb.mu.Lock()
	before := len(fb.entries)
	fb.mu.Unlock()
	c.send(req)
	for i := range writes {
		if got := c.read(); got != ":1\r\n" {
			t.Fatalf("ZADD %d: %q", i, got)
		}
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	most := 0
	for _, e := range fb.entries[before:] {
		size := 0
		for _, cmd := range e.Commands {
			size += argvBytes(cmd.Argv)
		}
		if len(e.Commands) > 1 && size > maxGatheredBytes {
			t.Fatalf("an entry of %d writes holds %d bytes of arguments, over %d", len(e.Commands), size, maxGatheredBytes)
		}
		most = max(most, len(e.Commands))
	}
	if most < 2 {
		t.Fatalf("no entry gathered writes (at most %d in an entry): the test shows nothing", most)
	}
	t.Logf("%d entries, at most %d writes each", len(fb.entries)-before, most)
}
