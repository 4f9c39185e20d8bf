package resp

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// logBuffer collects a server's log for the tests to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: l, Level: hclog.Info})
}

// closedSilently sends b on c and expects the server to close the
// connection without a byte of reply.
func closedSilently(t *testing.T, c *conn, b []byte) {
	t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.c.Write(b) // may fail once the server closes
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c.rd)
	if len(got) != 0 {
		t.Fatalf("a client past its query buffer limit read %q", trunc(string(got)))
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was not closed")
	}
}

func TestQueryBufferLimit(t *testing.T) {
	logs := &logBuffer{}
	s, _ := startServer(t, Config{Logger: logs.logger()})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"CONFIG", "GET", "client-query-buffer-limit"}, "*2\r\n$25\r\nclient-query-buffer-limit\r\n$10\r\n1073741824\r\n"},
		{[]string{"CONFIG", "SET", "client-query-buffer-limit", "1000"}, "-ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "client-query-buffer-limit", "big"}, "-ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "client-query-buffer-limit", "1mb"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "client-query-buffer-limit"}, "*2\r\n$25\r\nclient-query-buffer-limit\r\n$7\r\n1048576\r\n"},
	})
	// A whole request under the limit runs.
	member := strings.Repeat("m", 900<<10)
	if got := c.do("ZADD", "k", "1", member); got != ":1\r\n" {
		t.Fatalf("a 900 KiB request: %q", got)
	}
	// One bulk string past it, and many small arguments past it: closed,
	// with no reply.
	big := []byte("*2\r\n$4\r\nECHO\r\n$2000000\r\n")
	big = append(big, bytes.Repeat([]byte("x"), 1100<<10)...)
	closedSilently(t, dial(t, s), big)
	var many bytes.Buffer
	many.WriteString("*200000\r\n$4\r\nZADD\r\n")
	for many.Len() < 1200<<10 {
		many.WriteString("$5\r\nabcde\r\n")
	}
	closedSilently(t, dial(t, s), many.Bytes())
	if got := strings.Count(logs.String(), "closing client that reached max query buffer length"); got != 2 {
		t.Fatalf("%d closes logged, want 2:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), `qbuf_initial_bytes="*2\r\n$4\r\nECHO\r\n$2000000\r\nxxx`) {
		t.Fatalf("the log lacks the buffer's first bytes:\n%s", logs.String())
	}
	if got := c.do("ZCARD", "k"); got != ":1\r\n" {
		t.Fatalf("the other client: %q", got)
	}
}

func TestOutputBufferLimitConfig(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	prefix := "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
	run(t, c, []exchange{
		{[]string{"CONFIG", "GET", "client-output-buffer-limit"}, "*2\r\n$26\r\nclient-output-buffer-limit\r\n$67\r\nnormal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60\r\n"},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 512kb 10 replica 1 2 3"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "client-output-buffer-limit"}, "*2\r\n$26\r\nclient-output-buffer-limit\r\n$63\r\nnormal 1048576 524288 10 slave 1 2 3 pubsub 33554432 8388608 60\r\n"},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 1 2"}, prefix + "Wrong number of arguments in buffer limit configuration.\r\n"},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"}, prefix + "Invalid client class specified in buffer limit configuration.\r\n"},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 1 2 -3"}, prefix + "Error in hard, soft or soft_seconds setting in buffer limit configuration.\r\n"},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 1x 2 3"}, prefix + "Error in hard, soft or soft_seconds setting in buffer limit configuration.\r\n"},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0"}, "+OK\r\n"},
	})
}

// fillSet adds n members of size bytes to key.
func fillSet(t *testing.T, c *conn, key string, n, size int) {
	t.Helper()
	for i := 0; i < n; i += 1000 {
		argv := []string{"ZADD", key}
		for j := i; j < min(n, i+1000); j++ {
			argv = append(argv, fmt.Sprint(j), fmt.Sprintf("%0*d", size, j))
		}
		if got := c.do(argv...); !strings.HasPrefix(got, ":") {
			t.Fatalf("ZADD: %q", got)
		}
	}
}

// TestOutputBufferHardLimit: a reply that reaches the hard limit closes
// the client without the reply; ZRANDMEMBER with a huge negative count
// stops at it, as in Redis.
func TestOutputBufferHardLimit(t *testing.T) {
	logs := &logBuffer{}
	s, _ := startServer(t, Config{Logger: logs.logger(), OutputBufferLimit: "normal 1mb 0 0"})
	c := dial(t, s)
	fillSet(t, c, "big", 20000, 100) // about 2.3 MB of reply
	if got := c.do("ZRANGE", "big", "0", "99"); !strings.HasPrefix(got, "*100\r\n") {
		t.Fatalf("a small range: %q", trunc(got))
	}
	for _, argv := range [][]string{
		{"ZRANGE", "big", "0", "-1"},
		{"ZRANDMEMBER", "big", "-9223372036854775807"},
		{"ZRANDMEMBER", "big", "-1000000000", "WITHSCORES"},
		{"ZRANDMEMBER", "big", "15000"},
	} {
		d := dial(t, s)
		before := logs.String()
		d.send(append(encode(argv...), encode("PING")...))
		d.c.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, err := io.ReadAll(d.rd)
		if len(got) != 0 || err != nil {
			t.Fatalf("%q past the hard limit: read %q, %v", argv, trunc(string(got)), err)
		}
		if strings.Count(logs.String(), "closed for overcoming of output buffer limits") != strings.Count(before, "closed for overcoming of output buffer limits")+1 {
			t.Fatalf("%q: the close was not logged:\n%s", argv, logs.String())
		}
	}
	if got := c.do("ZCARD", "big"); got != ":20000\r\n" {
		t.Fatalf("the other client: %q", got)
	}
	// Lifting the limit serves the whole reply.
	if got := c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := c.do("ZRANDMEMBER", "big", "-30000"); !strings.HasPrefix(got, "*30000\r\n") {
		t.Fatalf("without a limit: %q", trunc(got))
	}
}

// TestOutputBufferSoftLimit: replies above the soft limit that the client
// does not read within the soft seconds close it. The part of a reply the
// socket already took counts until the whole reply is written, so a
// reply just above the limit closes a client that reads none of it,
// though what is left of it once the kernel took its part is under the
// limit. A client that reads its replies is served, however long ago its
// last large one was.
func TestOutputBufferSoftLimit(t *testing.T) {
	logs := &logBuffer{}
	s, _ := startServer(t, Config{Logger: logs.logger(), OutputBufferLimit: "normal 0 8mb 1"})
	c := dial(t, s)
	fillSet(t, c, "big", 20000, 420) // about 8.6 MB of reply, more than a socket takes
	reader := func() {
		t.Helper()
		if got := c.do("ZRANGE", "big", "0", "-1"); !strings.HasPrefix(got, "*20000\r\n") {
			t.Fatalf("a reader: %q", trunc(got))
		}
	}
	reader()
	d := dial(t, s)
	if tc, ok := d.c.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	// The first reply alone, as a batch of its own; then more.
	d.send(encode("ZRANGE", "big", "0", "-1"))
	time.Sleep(200 * time.Millisecond)
	for range 19 {
		d.send(encode("ZRANGE", "big", "0", "-1"))
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "closed for overcoming of output buffer limits") {
		if time.Now().After(deadline) {
			t.Fatalf("a client that does not read was not closed:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Count(logs.String(), "closed for overcoming") != 1 {
		t.Fatalf("more than one client closed:\n%s", logs.String())
	}
	reader()
}

// A MONITOR client that does not read is held to the normal class's
// hard output buffer limit, as Redis holds it: the lines waiting for it
// count, and it is closed once they reach the limit.
func TestMonitorOutputBufferLimit(t *testing.T) {
	var logs logBuffer
	s, _ := startServer(t, Config{Logger: logs.logger(), OutputBufferLimit: "normal 1mb 0 0"})
	m := dial(t, s)
	if got := m.do("MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR = %q", got)
	}
	c := dial(t, s)
	arg := strings.Repeat("\x01", 256<<10) // a line of 1 MiB once escaped
	for i := 0; i < 64 && s.monitors.n.Load() > 0; i++ {
		c.do("ZSCORE", "k", arg)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.monitors.n.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.monitors.n.Load(); n != 0 {
		t.Fatalf("%d monitors after 64 MiB of lines not read, limit 1mb", n)
	}
	if !strings.Contains(logs.String(), "closing a MONITOR client for its output buffer limit") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

// TestReplyBudget: with no hard limit for normal clients (Redis's
// default), a reply that would take more memory than the node has to
// spare stops at the reply budget and its client is closed as the hard
// limit closes it, while the node serves the others; a reply within it is
// served whole.
func TestReplyBudget(t *testing.T) {
	logs := &logBuffer{}
	s, _ := startServer(t, Config{Logger: logs.logger()})
	if runtime.GOOS == "linux" && (s.memTotal.Load() <= 0 || s.replyBudget.Load() < replyBudgetFloor) {
		t.Fatalf("memory %d, budget %d: the machine's memory was not read", s.memTotal.Load(), s.replyBudget.Load())
	}
	s.memTotal.Store(1) // as if the heap filled the machine: the budget is its floor
	s.refreshReplyBudget()
	c := dial(t, s)
	fillSet(t, c, "small", 10, 10)
	if got := c.do("ZRANDMEMBER", "small", "-100000"); !strings.HasPrefix(got, "*100000\r\n") {
		t.Fatalf("a reply within the budget: %q", trunc(got))
	}
	d := dial(t, s)
	d.send(append(encode("ZRANDMEMBER", "small", "-100000000", "WITHSCORES"), encode("PING")...))
	d.c.SetReadDeadline(time.Now().Add(60 * time.Second))
	got, err := io.ReadAll(d.rd)
	if len(got) != 0 || err != nil {
		t.Fatalf("a reply past the budget: read %q, %v", trunc(string(got)), err)
	}
	if !strings.Contains(logs.String(), "closed for overcoming of output buffer limits") {
		t.Fatalf("the close was not logged:\n%s", logs.String())
	}
	if got := c.do("ZCARD", "small"); got != ":10\r\n" {
		t.Fatalf("the other client: %q", got)
	}
}

// TestReplyBudgetShared: the budget is shared by every client's waiting
// replies, so clients asking at once for replies that each fit it cannot
// together take more: while one client leaves a reply of most of the
// budget unread, another's is refused and its client closed; once the
// first reply is read, the same request is served whole.
func TestReplyBudgetShared(t *testing.T) {
	logs := &logBuffer{}
	s, _ := startServer(t, Config{Logger: logs.logger()})
	s.memTotal.Store(1) // the budget is its floor
	s.refreshReplyBudget()
	const members, size = 36000, 1000 // a reply of about 36 MiB of the 64
	c := dial(t, s)
	fillSet(t, c, "big", members, size)

	a := dial(t, s)
	a.send(encode("ZRANGE", "big", "0", "-1"))
	deadline := time.Now().Add(30 * time.Second)
	for s.replyHeld.Load() < 30<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the unread reply holds %d of the budget", s.replyHeld.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	b := dial(t, s)
	b.send(encode("ZRANGE", "big", "0", "-1"))
	b.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if got, err := io.ReadAll(b.rd); len(got) != 0 || err != nil {
		t.Fatalf("a second reply past what is left of the budget: read %q, %v", trunc(string(got)), err)
	}
	if !strings.Contains(logs.String(), "closed for overcoming of output buffer limits") {
		t.Fatalf("the close was not logged:\n%s", logs.String())
	}

	readRange := func(d *conn) {
		t.Helper()
		d.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if line, err := d.rd.ReadString('\n'); line != fmt.Sprintf("*%d\r\n", members) {
			t.Fatalf("reply header %q, %v", line, err)
		}
		for i := 0; i < members; i++ {
			line, err := d.rd.ReadString('\n')
			if line != fmt.Sprintf("$%d\r\n", size) {
				t.Fatalf("element %d: %q, %v", i, line, err)
			}
			if _, err := d.rd.Discard(size + 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	readRange(a)
	deadline = time.Now().Add(10 * time.Second)
	for s.replyHeld.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the budget still held after the reply was read", s.replyHeld.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := dial(t, s)
	d.send(encode("ZRANGE", "big", "0", "-1"))
	readRange(d)
	if got := d.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after: %q", got)
	}
}
