package resp

import (
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A request that arrives together with the end of the stream (the client
// corks its socket, writes and shuts its side) is answered, and the
// connection closes within the bound on a wait that skipped a read: the
// poller reports the request and the end at once, and the short read that
// takes the request leaves the end unread.
func TestLastRequestWithEndOfStream(t *testing.T) {
	s, _ := startServer(t, Config{})
	for i := range 3 {
		c := dial(t, s)
		for range 2 { // served from inside the socket's RawConn Read by now
			if got := c.do("PING"); got != "+PONG\r\n" {
				t.Fatalf("PING: %q", got)
			}
		}
		tc := c.c.(*net.TCPConn)
		cork(t, tc)
		c.send(encode("ECHO", "last"))
		if err := tc.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, err := io.ReadAll(c.rd)
		if err != nil {
			t.Fatalf("round %d: the connection did not close: %v (read %q)", i, err, rest)
		}
		if string(rest) != "$4\r\nlast\r\n" {
			t.Fatalf("round %d: read %q", i, rest)
		}
		if d := time.Since(start); d > 2*unreadBound+time.Second {
			t.Errorf("round %d: closed after %v", i, d)
		}
	}
}

// cork holds what is written to c until it is uncorked or shut, so a
// request and the end of the stream leave in one segment.
func cork(t *testing.T, c *net.TCPConn) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1)
	}); err != nil || serr != nil {
		t.Skipf("TCP_CORK: %v %v", err, serr)
	}
}

// A blocking pop sent on a connection already served from inside its
// RawConn Read runs outside it, where its wait notices the client leave:
// the gone client takes nothing, and CLIENT KILL ends a connection
// waiting for its next request.
func TestBlockingAfterRawReads(t *testing.T) {
	s, _ := startServer(t, Config{})
	ctl := dial(t, s)
	w := dial(t, s)
	for range 3 {
		w.do("PING")
	}
	w.send(encode("BZPOPMIN", "q", "0"))
	waitBlocked(t, s, 1)
	w.c.Close()
	waitBlocked(t, s, 0)
	ctl.do("ZADD", "q", "1", "a")
	if got := ctl.do("ZCARD", "q"); got != ":1\r\n" {
		t.Fatalf("ZCARD after the gone client's pop: %q", got)
	}

	// The same connection blocks, is served, and goes on reading.
	b := dial(t, s)
	b.do("PING")
	b.send(append(encode("BZPOPMIN", "p", "0"), encode("PING")...))
	waitBlocked(t, s, 1)
	ctl.do("ZADD", "p", "2", "x")
	if got, ping := b.read(), b.read(); !strings.HasPrefix(got, "*3\r\n$1\r\np\r\n") || ping != "+PONG\r\n" {
		t.Fatalf("pop %q, then %q", got, ping)
	}
	for range 3 {
		if got := b.do("ECHO", "again"); got != "$5\r\nagain\r\n" {
			t.Fatalf("after the pop: %q", got)
		}
	}

	// CLIENT KILL of a connection waiting in its RawConn Read.
	id := strings.TrimPrefix(strings.TrimSpace(b.do("CLIENT", "ID")), ":")
	if got := ctl.do("CLIENT", "KILL", "ID", id); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL: %q", got)
	}
	expectClosed(t, b)
}
