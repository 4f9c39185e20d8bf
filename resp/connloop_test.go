package resp

import (
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A request that arrives together with the end of the stream (the client
// corks its socket, writes and shuts its side) is answered, and the
// connection closes within the bound on a wait that skipped a read: the
// poller reports the request and the end at once, and the short read that
// takes the request leaves the end unread. Over TLS, with and without the
// session's close_notify before the end.
func TestLastRequestWithEndOfStream(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{}, fx, false)
	for _, tr := range []struct {
		name   string
		dial   func() *conn
		notify bool // TLS: close_notify before the end of the stream
	}{
		{"tcp", func() *conn { return dial(t, s) }, false},
		{"tls", func() *conn { return dialTLS(t, s, fx.client) }, false},
		{"tls close_notify", func() *conn { return dialTLS(t, s, fx.client) }, true},
	} {
		for i := range 3 {
			c := tr.dial()
			for range 2 { // served from inside the socket's RawConn Read by now
				if got := c.do("PING"); got != "+PONG\r\n" {
					t.Fatalf("%s: PING: %q", tr.name, got)
				}
			}
			tc, _ := c.c.(*net.TCPConn)
			tlc, isTLS := c.c.(*tls.Conn)
			if isTLS {
				tc = tlc.NetConn().(*net.TCPConn)
			}
			cork(t, tc)
			c.send(encode("ECHO", "last"))
			if tr.notify {
				if err := tlc.CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			rest, err := io.ReadAll(c.rd)
			if err != nil {
				t.Fatalf("%s, round %d: the connection did not close: %v (read %q)", tr.name, i, err, rest)
			}
			if string(rest) != "$4\r\nlast\r\n" {
				t.Fatalf("%s, round %d: read %q", tr.name, i, rest)
			}
			if d := time.Since(start); d > 2*unreadBound+time.Second {
				t.Errorf("%s, round %d: closed after %v", tr.name, i, d)
			}
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
// waiting for its next request. Over TCP and over TLS.
func TestBlockingAfterRawReads(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{}, fx, false)
	ctl := dial(t, s)
	for _, tr := range []struct {
		name string
		dial func() *conn
	}{
		{"tcp", func() *conn { return dial(t, s) }},
		{"tls", func() *conn { return dialTLS(t, s, fx.client) }},
	} {
		q, p := "q-"+tr.name, "p-"+tr.name
		w := tr.dial()
		for range 3 {
			w.do("PING")
		}
		w.send(encode("BZPOPMIN", q, "0"))
		waitBlocked(t, s, 1)
		w.c.Close()
		waitBlocked(t, s, 0)
		ctl.do("ZADD", q, "1", "a")
		if got := ctl.do("ZCARD", q); got != ":1\r\n" {
			t.Fatalf("%s: ZCARD after the gone client's pop: %q", tr.name, got)
		}

		// The same connection blocks, is served, and goes on reading.
		b := tr.dial()
		b.do("PING")
		b.send(append(encode("BZPOPMIN", p, "0"), encode("PING")...))
		waitBlocked(t, s, 1)
		ctl.do("ZADD", p, "2", "x")
		if got, ping := b.read(), b.read(); !strings.HasPrefix(got, "*3\r\n$"+strconv.Itoa(len(p))+"\r\n"+p+"\r\n") || ping != "+PONG\r\n" {
			t.Fatalf("%s: pop %q, then %q", tr.name, got, ping)
		}
		for range 3 {
			if got := b.do("ECHO", "again"); got != "$5\r\nagain\r\n" {
				t.Fatalf("%s: after the pop: %q", tr.name, got)
			}
		}

		// CLIENT KILL of a connection waiting in its RawConn Read.
		id := strings.TrimPrefix(strings.TrimSpace(b.do("CLIENT", "ID")), ":")
		if got := ctl.do("CLIENT", "KILL", "ID", id); got != ":1\r\n" {
			t.Fatalf("%s: CLIENT KILL: %q", tr.name, got)
		}
		expectClosed(t, b)
	}
}
