package resp

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tidwall/redcon"
)

// pipeConn is a net.Conn whose reads come from a fixed input and whose
// writes are kept.
type pipeConn struct {
	net.Conn
	r io.Reader
	w bytes.Buffer
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }

// TestFirstRequest: redcon reads a connection's first request as the
// client sent it when it parses those bytes as the one request they are,
// and an empty stand-in otherwise; the request served is the Framer's
// parse, Redis's; a protocol error is answered with Redis's text.
func TestFirstRequest(t *testing.T) {
	big := string(encode("ECHO", strings.Repeat("x", 5000)))
	for _, c := range []struct {
		in       string
		redcon   string // what redcon reads
		argv     []string
		answered string // written to the client by the framedConn
	}{
		{in: "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n", redcon: "*1\r\n$4\r\nPING\r\n", argv: []string{"PING"}},
		{in: "*0\r\n\r\nECHO \"a b\"\r\nPING\r\n", redcon: "ECHO \"a b\"\r\n", argv: []string{"ECHO", "a b"}},
		// redcon refuses a quote inside an argument; Redis joins the parts.
		{in: "ECHO a\"b c\"\r\n", redcon: string(firstStandIn), argv: []string{"ECHO", "ab c"}},
		// redcon needs "\r\n" after a bulk string; Redis takes any two bytes.
		{in: "*1\r\n$4\r\nPINGxy", redcon: string(firstStandIn), argv: []string{"PING"}},
		// Past redcon's first read: not copied into redcon's buffers.
		{in: big, redcon: string(firstStandIn), argv: []string{"ECHO", strings.Repeat("x", 5000)}},
		{in: "*1\r\n$-1\r\n", answered: "-ERR Protocol error: invalid bulk length\r\n"},
		{in: "ECHO 'a\r\n", answered: "-ERR Protocol error: unbalanced quotes in request\r\n"},
	} {
		for _, bytewise := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.in)
			if bytewise {
				r = iotest.OneByteReader(r)
			}
			pc := &pipeConn{r: r}
			fc := newFramedConn(pc, nil, 0)
			read := &recorder{r: fc}
			_, err := redcon.NewReader(read).ReadCommand()
			if c.argv == nil {
				if err == nil {
					t.Errorf("%q: redcon read %q from a request with a protocol error", trunc(c.in), read.b.String())
				}
			} else if err != nil || read.b.String() != c.redcon {
				t.Errorf("%q byte by byte %v: redcon read %q, %v; want %q", trunc(c.in), bytewise, trunc(read.b.String()), err, trunc(c.redcon))
			}
			var argv []string
			for _, a := range fc.first {
				argv = append(argv, string(a))
			}
			if strings.Join(argv, "|") != strings.Join(c.argv, "|") {
				t.Errorf("%q byte by byte %v: first request %q, want %q", trunc(c.in), bytewise, argv, c.argv)
			}
			if pc.w.String() != c.answered {
				t.Errorf("%q byte by byte %v: answered %q, want %q", trunc(c.in), bytewise, pc.w.String(), c.answered)
			}
		}
	}
}

// recorder keeps what is read through it.
type recorder struct {
	r io.Reader
	b bytes.Buffer
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b.Write(p[:n])
	return n, err
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// TestProtocolErrorsOverTheWire checks what a client sees: the commands
// before the bad input run, the error is Redis's, and the connection
// closes; nothing is written to the log. The bad input is the first
// request in some cases, later in others.
func TestProtocolErrorsOverTheWire(t *testing.T) {
	s, fb := startServer(t, Config{})
	for _, c := range []struct{ in, want string }{
		{"*1\r\n$4\r\nPING\r\n*abc\r\n", "+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n"},
		{"*2\r\n$4\r\nPING\r\n$1\r\nx\r\n*2\r\n$4\r\nZADD\r\n:1\r\n", "$1\r\nx\r\n-ERR Protocol error: expected '$', got ':'\r\n"},
		{"*1\r\n$999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*1\r\n:4\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"},
		{"ZADD k '1 x\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"ECHO \"a\"b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{strings.Repeat("x", 70000), "-ERR Protocol error: too big inline request\r\n"},
	} {
		fb.mu.Lock()
		before := len(fb.entries)
		fb.mu.Unlock()
		c1 := dial(t, s)
		c1.send([]byte(c.in))
		c1.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c1.rd)
		if err != nil {
			t.Errorf("%q: the connection was not closed: %v (read %q)", trunc(c.in), err, got)
		}
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", trunc(c.in), got, c.want)
		}
		fb.mu.Lock()
		if len(fb.entries) != before {
			t.Errorf("%q: bad input reached the log", trunc(c.in))
		}
		fb.mu.Unlock()
	}
	// Inline commands as Redis splits them, first and later.
	c := dial(t, s)
	c.send([]byte("ZADD k 1 \"a b\" 2 '\\x41'\r\nZRANGE k 0 -1\n"))
	if got := c.read(); got != ":2\r\n" {
		t.Errorf("inline ZADD: %q", got)
	}
	if got := c.read(); got != "*2\r\n$3\r\na b\r\n$4\r\n\\x41\r\n" {
		t.Errorf("inline ZRANGE: %q", got)
	}
	for _, in := range []string{"ECHO a\"b c\"\r\n", "ECHO \"ab\\x20c\"\r\n", "*2\r\n$4\r\nECHO\r\n$4\r\nab cxy"} {
		c := dial(t, s)
		c.send([]byte(in + "PING\r\n"))
		if got := c.read(); got != "$4\r\nab c\r\n" {
			t.Errorf("%q first: %q", in, got)
		}
		if got := c.read(); got != "+PONG\r\n" {
			t.Errorf("PING after %q: %q", in, got)
		}
	}
	// A first request longer than redcon's first read.
	c = dial(t, s)
	long := strings.Repeat("y", 100000)
	if got := c.do("ECHO", long); got != "$100000\r\n"+long+"\r\n" {
		t.Errorf("a first ECHO of 100000 bytes: %q", trunc(got))
	}
}

// TestUnauthenticatedLimits: before AUTH, Redis refuses requests of more
// than 10 arguments or bulk strings over 16 KB.
func TestUnauthenticatedLimits(t *testing.T) {
	s, _ := startServer(t, Config{RequirePass: "pw"})
	for _, c := range []struct{ in, want string }{
		{"*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n"},
		{"*1\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n"},
	} {
		c1 := dial(t, s)
		c1.send([]byte(c.in))
		c1.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, _ := io.ReadAll(c1.rd)
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	c := dial(t, s)
	if got := c.do("AUTH", "pw"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := c.do("ECHO", strings.Repeat("x", 20000)); len(got) != 20010 {
		t.Errorf("a 20000-byte argument after AUTH: %q", trunc(got))
	}
}
