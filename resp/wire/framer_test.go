package wire

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/redcon"
)

// pipeConn is a net.Conn whose reads come from a fixed input.
type pipeConn struct {
	net.Conn
	r io.Reader
}

func (p *pipeConn) Read(b []byte) (int, error) { return p.r.Read(b) }

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

// chunked returns a Framer reading input in chunks of size n.
func chunked(input string, n int) *Framer {
	var chunks []io.Reader
	for i := 0; i < len(input); i += n {
		chunks = append(chunks, strings.NewReader(input[i:min(i+n, len(input))]))
	}
	return NewFramer(&pipeConn{r: &oneByOne{chunks: chunks}})
}

// frame runs input through ReadBatch (first bool false) or ReadFirst
// and returns the requests read, canonical, then the reply of the
// protocol error that ended them, if one did.
func frame(input string, n int, first bool) string {
	f := chunked(input, n)
	out, _ := collect(func() ([][][]byte, error) {
		if first {
			argv, _, err := f.ReadFirst()
			return [][][]byte{argv}, err
		}
		return f.ReadBatch(nil)
	})
	return out
}

// collect calls next until it fails and returns the requests it gave,
// canonical, then the reply of the protocol error that ended them, if one
// did; other errors than a protocol error are returned.
func collect(next func() ([][][]byte, error)) (string, error) {
	var out []byte
	for {
		cmds, err := next()
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				return string(append(out, pe.Reply()...)), nil
			}
			return string(out), err
		}
		for _, argv := range cmds {
			out = AppendCommand(out, argv...)
		}
	}
}

func TestFramer(t *testing.T) {
	protoErr := func(msg string) string { return "-ERR Protocol error: " + msg + "\r\n" }
	cases := []struct{ in, want string }{
		{"*1\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPING\r\n"},
		{"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"},
		// Redis takes any two bytes after the data, and any byte after '\r'.
		{"*1\r\n$4\r\nPINGxy", "*1\r\n$4\r\nPING\r\n"},
		{"*1\rX$4\rXPING\r\n", "*1\r\n$4\r\nPING\r\n"},
		// Empty and negative multibulk counts are no request at all.
		{"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPING\r\n"},
		// Inline commands, quotes as Redis splits them.
		{"PING\r\necho \"a b\"\n\r\n", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\necho\r\n$3\r\na b\r\n"},
		{"set k a\"b c\" '\\x41'\n", "*4\r\n$3\r\nset\r\n$1\r\nk\r\n$4\r\nab c\r\n$4\r\n\\x41\r\n"},
		{"set a 'b\r\n", protoErr("unbalanced quotes in request")},
		{"set a \"b\"c\r\n", protoErr("unbalanced quotes in request")},
		{"*1\r\n$4\r\nPING\r\n*x\r\n", "*1\r\n$4\r\nPING\r\n" + protoErr("invalid multibulk length")},
		{"*2147483648\r\n", protoErr("invalid multibulk length")},
		{"*1\r\n$-1\r\n", protoErr("invalid bulk length")},
		{"*1\r\n$536870913\r\n", protoErr("invalid bulk length")},
		{"*1\r\n$01\r\n", protoErr("invalid bulk length")},
		{"*1\r\n:4\r\n", protoErr("expected '$', got ':'")},
		// An error reply is one line: Redis writes a line break the client
		// sent as a space.
		{"*1\r\n\nx\r\n", protoErr("expected '$', got ' '")},
		{"*1\r\n\rx\r\n", protoErr("expected '$', got ' '")},
		{"*1\r\n" + strings.Repeat("x", 70000), protoErr("too big bulk count string")},
		{"*2\r\n$1\r\na\r\n$x\r\n", protoErr("invalid bulk length")},
		{"*1\r\n$4\r\nPING\r\n*2\r\n$1\r\na\r\n:1\r\n", "*1\r\n$4\r\nPING\r\n" + protoErr("expected '$', got ':'")},
		{strings.Repeat("x", 70000), protoErr("too big inline request")},
		{"*" + strings.Repeat("1", 70000), protoErr("too big mbulk count string")},
		{"*1\r\n$" + strings.Repeat("1", 70000), protoErr("too big bulk count string")},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3, 1 << 20} {
			for _, first := range []bool{false, true} {
				if got := frame(c.in, n, first); got != c.want {
					t.Errorf("frame(%q, chunks of %d, ReadFirst %v):\n got %q\nwant %q", trunc(c.in), n, first, trunc(got), trunc(c.want))
				}
			}
		}
	}
}

// TestReadFirstRaw: ReadFirst returns a request's bytes exactly as they
// came, whatever came before it, and the next read goes on after them.
func TestReadFirstRaw(t *testing.T) {
	for _, c := range []struct{ in, raw, rest string }{
		{"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n", "*1\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nQUIT\r\n"},
		{"*0\r\n\r\n  \n*1\r\n$4\r\nPINGxy*1\r\n$4\r\nQUIT\r\n", "*1\r\n$4\r\nPINGxy", "*1\r\n$4\r\nQUIT\r\n"},
		{"\nset k \"a b\"\r\n*1\r\n$4\r\nQUIT\r\n", "set k \"a b\"\r\n", "*1\r\n$4\r\nQUIT\r\n"},
		{"PING\nQUIT\n", "PING\n", "*1\r\n$4\r\nQUIT\r\n"},
	} {
		for _, n := range []int{1, 5, 1 << 20} {
			f := chunked(c.in, n)
			_, raw, err := f.ReadFirst()
			if err != nil || string(raw) != c.raw {
				t.Errorf("ReadFirst(%q, chunks of %d) = %q, %v; want %q", c.in, n, raw, err, c.raw)
				continue
			}
			cmds, err := f.ReadBatch(nil)
			if err != nil || len(cmds) != 1 || string(AppendCommand(nil, cmds[0]...)) != c.rest {
				t.Errorf("after ReadFirst(%q, chunks of %d): %q, %v; want %q", c.in, n, cmds, err, c.rest)
			}
		}
	}
}

// TestFramerUnauthenticated: before AUTH, Redis refuses requests of more
// than 10 arguments or bulk strings over 16 KB.
func TestFramerUnauthenticated(t *testing.T) {
	unauth := true
	for _, c := range []struct {
		in   string
		want error
	}{
		{"*11\r\n", &ProtocolError{"unauthenticated multibulk length"}},
		{"*1\r\n$16385\r\n", &ProtocolError{"unauthenticated bulk length"}},
		{"*10\r\n", io.EOF},
		{"*1\r\n$16384\r\n", io.EOF},
	} {
		f := chunked(c.in, 1<<20)
		f.Unauth = func() bool { return unauth }
		_, err := f.ReadBatch(nil)
		if err.Error() != c.want.Error() {
			t.Errorf("%q: %v, want %v", c.in, err, c.want)
		}
	}
}

// The buffer of a client sending one endless request stays within the
// limit plus one read, and the Framer then stops.
func TestQueryBufferBounded(t *testing.T) {
	var limit atomic.Int64
	limit.Store(1 << 20)
	body := io.MultiReader(strings.NewReader("*2\r\n$4\r\nECHO\r\n$100000000\r\n"), &repeatReader{b: []byte("x")})
	f := NewFramer(&pipeConn{r: &capRecorder{r: body}})
	f.Limit = &limit
	var told []byte
	f.OverLimit = func(b []byte) { told = append([]byte(nil), b...) }
	peak := 0
	for f.st != stDead {
		f.fill()
		peak = max(peak, cap(f.in))
		f.parse(-1)
	}
	if peak > 1<<20+2*readChunk {
		t.Fatalf("the buffer grew to %d bytes with a limit of 1 MiB", peak)
	}
	if !strings.HasPrefix(string(told), "*2\r\n$4\r\nECHO\r\n$100000000\r\nxxx") {
		t.Fatalf("OverLimit was told %q", told)
	}
	if _, err := f.ReadBatch(nil); err != ErrQueryBufferLimit {
		t.Fatalf("ReadBatch after the limit: %v, want ErrQueryBufferLimit", err)
	}
}

// A limit as large as an int64 holds (CONFIG SET client-query-buffer-limit
// 9223372036854775807, which Redis accepts) is no limit: the Framer reads
// on, where adding one read to the limit overflowed into a negative
// buffer size and a panic.
func TestQueryBufferLimitAtMaxInt64(t *testing.T) {
	var limit atomic.Int64
	limit.Store(math.MaxInt64)
	f := chunked(strings.Repeat("*1\r\n$4\r\nPING\r\n", 5000), 1<<20)
	f.Limit = &limit
	n := 0
	for {
		cmds, err := f.ReadBatch(nil)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		n += len(cmds)
	}
	if n != 5000 {
		t.Fatalf("read %d requests, want 5000", n)
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1, "-1": -1, "9223372036854775807": 1<<63 - 1,
		"-9223372036854775808": -1 << 63} {
		if got, ok := parseInt([]byte(in)); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "-", "-0", "01", "+1", " 1", "1 ", "9223372036854775808", "-9223372036854775809", "1x"} {
		if got, ok := parseInt([]byte(in)); ok {
			t.Errorf("parseInt(%q) = %d, want a failure", in, got)
		}
	}
}

// capRecorder reads in chunks as large as the reader asks.
type capRecorder struct{ r io.Reader }

func (c *capRecorder) Read(p []byte) (int, error) { return io.ReadFull(c.r, p) }

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

// BenchmarkFramer compares parsing a pipeline of commands with redcon's
// reader and with the Framer, in the steady state of a connection: every
// read brings the same 100 commands.
func BenchmarkFramer(b *testing.B) {
	var cmd bytes.Buffer
	for i := range 100 {
		cmd.Write(AppendCommandStrings(nil, "ZADD", "leaderboard", "12345.5", "player:"+strconv.Itoa(i)))
	}
	input := cmd.Bytes()
	b.Run("redcon", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		rd := redcon.NewReader(&repeatReader{b: input})
		for b.Loop() {
			for n := 0; n < 100; {
				cmds, err := rd.ReadCommands()
				if err != nil {
					b.Fatal(err)
				}
				n += len(cmds)
			}
		}
	})
	b.Run("framer", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		f := NewFramer(&pipeConn{r: &repeatReader{b: input}})
		for b.Loop() {
			for n := 0; n < 100; {
				cmds, err := f.ReadBatch(nil)
				if err != nil {
					b.Fatal(err)
				}
				n += len(cmds)
			}
		}
	})
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
