package resp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
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

// frame runs input through a framedConn in chunks of size n and returns
// the requests redcon would run (canonical RESP), then what framedConn
// wrote to the client.
func frame(input string, n int) string {
	var chunks []io.Reader
	for i := 0; i < len(input); i += n {
		chunks = append(chunks, strings.NewReader(input[i:min(i+n, len(input))]))
	}
	pc := &pipeConn{r: &oneByOne{chunks: chunks}}
	rd := redcon.NewReader(newFramedConn(pc))
	var out strings.Builder
	for {
		cmd, err := rd.ReadCommand()
		if err != nil {
			break
		}
		var argv []string
		for _, a := range cmd.Args {
			argv = append(argv, string(a))
		}
		out.Write(encode(argv...))
	}
	return out.String() + pc.w.String()
}

// frameBatches is frame through readBatch, the parser the server uses.
func frameBatches(input string, n int) string {
	var chunks []io.Reader
	for i := 0; i < len(input); i += n {
		chunks = append(chunks, strings.NewReader(input[i:min(i+n, len(input))]))
	}
	pc := &pipeConn{r: &oneByOne{chunks: chunks}}
	fc := newFramedConn(pc)
	var out strings.Builder
	for {
		cmds, err := fc.readBatch(nil)
		if err != nil {
			break
		}
		for _, argv := range cmds {
			var args []string
			for _, a := range argv {
				args = append(args, string(a))
			}
			out.Write(encode(args...))
		}
	}
	return out.String() + pc.w.String()
}

// oneByOne returns each chunk from a separate Read, as a socket would.
type oneByOne struct{ chunks []io.Reader }

func (o *oneByOne) Read(b []byte) (int, error) {
	for len(o.chunks) > 0 {
		n, err := o.chunks[0].Read(b)
		if errors.Is(err, io.EOF) {
			o.chunks = o.chunks[1:]
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, io.EOF
}

func TestFramedConnCanonicalizes(t *testing.T) {
	protoErr := func(msg string) string { return "-ERR Protocol error: " + msg + "\r\n" }
	cases := []struct{ in, want string }{
		{"*1\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPING\r\n"},
		{"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"},
		// Redis takes any two bytes after the data, and any byte after '\r'.
		{"*1\r\n$4\r\nPINGxy", "*1\r\n$4\r\nPING\r\n"},
		{"*1\rX$4\rXPING\r\n", "*1\r\n$4\r\nPING\r\n"},
		// Empty and negative multibulk counts are no request at all.
		{"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPING\r\n"},
		// Inline commands become multibulk, quotes as Redis splits them.
		{"PING\r\necho \"a b\"\n\r\n", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\necho\r\n$3\r\na b\r\n"},
		{"set a 'b\r\n", protoErr("unbalanced quotes in request")},
		{"*1\r\n$4\r\nPING\r\n*x\r\n", "*1\r\n$4\r\nPING\r\n" + protoErr("invalid multibulk length")},
		{"*2147483648\r\n", protoErr("invalid multibulk length")},
		{"*1\r\n$-1\r\n", protoErr("invalid bulk length")},
		{"*1\r\n$536870913\r\n", protoErr("invalid bulk length")},
		{"*1\r\n$01\r\n", protoErr("invalid bulk length")},
		{"*1\r\n:4\r\n", protoErr("expected '$', got ':'")},
		{"*1\r\n" + strings.Repeat("x", 70000), protoErr("too big bulk count string")},
		{"*2\r\n$1\r\na\r\n$x\r\n", protoErr("invalid bulk length")},
		{"*1\r\n$4\r\nPING\r\n*2\r\n$1\r\na\r\n:1\r\n", "*1\r\n$4\r\nPING\r\n" + protoErr("expected '$', got ':'")},
		{strings.Repeat("x", 70000), protoErr("too big inline request")},
		{"*" + strings.Repeat("1", 70000), protoErr("too big mbulk count string")},
		{"*1\r\n$" + strings.Repeat("1", 70000), protoErr("too big bulk count string")},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3, 1 << 20} {
			if got := frame(c.in, n); got != c.want {
				t.Errorf("frame(%q, chunks of %d):\n got %q\nwant %q", trunc(c.in), n, trunc(got), trunc(c.want))
			}
			if got := frameBatches(c.in, n); got != c.want {
				t.Errorf("frameBatches(%q, chunks of %d):\n got %q\nwant %q", trunc(c.in), n, trunc(got), trunc(c.want))
			}
		}
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// TestProtocolErrorsOverTheWire checks what a client sees: the commands
// before the bad input run, the error is Redis's, and the connection
// closes; nothing is written to the log.
func TestProtocolErrorsOverTheWire(t *testing.T) {
	s, fb := startServer(t, Config{})
	for _, c := range []struct{ in, want string }{
		{"*1\r\n$4\r\nPING\r\n*abc\r\n", "+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n"},
		{"*2\r\n$4\r\nPING\r\n$1\r\nx\r\n*2\r\n$4\r\nZADD\r\n:1\r\n", "$1\r\nx\r\n-ERR Protocol error: expected '$', got ':'\r\n"},
		{"*1\r\n$999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"ZADD k '1 x\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
	} {
		fb.mu.Lock()
		before := len(fb.entries)
		fb.mu.Unlock()
		c1 := dial(t, s)
		c1.send([]byte(c.in))
		c1.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c1.rd)
		if err != nil {
			t.Errorf("%q: the connection was not closed: %v (read %q)", c.in, err, got)
		}
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		fb.mu.Lock()
		if len(fb.entries) != before {
			t.Errorf("%q: bad input reached the log", c.in)
		}
		fb.mu.Unlock()
	}
	// Inline commands as Redis splits them.
	c := dial(t, s)
	c.send([]byte("ZADD k 1 \"a b\" 2 '\\x41'\r\nZRANGE k 0 -1\n"))
	if got := c.read(); got != ":2\r\n" {
		t.Errorf("inline ZADD: %q", got)
	}
	if got := c.read(); got != "*2\r\n$3\r\na b\r\n$4\r\n\\x41\r\n" {
		t.Errorf("inline ZRANGE: %q", got)
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

// BenchmarkFramedConn compares parsing a pipeline of commands with redcon
// and with framedConn.readBatch, the parser the server uses, in the steady
// state of a connection: every read brings the same 100 commands.
func BenchmarkFramedConn(b *testing.B) {
	var cmd bytes.Buffer
	for i := 0; i < 100; i++ {
		cmd.Write(encode("ZADD", "leaderboard", "12345.5", "player:"+itoa(i)))
	}
	input := cmd.Bytes()
	b.Run("redcon", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		rd := redcon.NewReader(&repeatReader{b: input})
		for i := 0; i < b.N; i++ {
			for n := 0; n < 100; {
				cmds, err := rd.ReadCommands()
				if err != nil {
					b.Fatal(err)
				}
				n += len(cmds)
			}
		}
	})
	b.Run("framed", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		fc := newFramedConn(&pipeConn{r: &repeatReader{b: input}})
		for i := 0; i < b.N; i++ {
			for n := 0; n < 100; {
				cmds, err := fc.readBatch(nil)
				if err != nil {
					b.Fatal(err)
				}
				n += len(cmds)
			}
		}
	})
}

// repeatReader returns b over and over, as much of it as a Read takes.
type repeatReader struct {
	b   []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.off:])
	r.off = (r.off + n) % len(r.b)
	return n, nil
}
