package e2e

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestFramingMatchesRedis sends redis-server and goblind the same random
// byte streams, each on a connection of its own, and compares everything
// each answers until it closes the connection: requests inline and
// multibulk, with quoting, escapes, whitespace and line ends as clients
// and attackers write them, and framing gone wrong (counts and lengths
// off by one or not numbers, bytes other than CRLF after a bulk string,
// unbalanced quotes, a stream cut mid-request), and names of no command
// (Redis quotes them and their first arguments in its error). Only ECHO
// and PING are named, and the bytes in arguments cannot spell another
// command, so the replies show how each server split the stream into
// requests and arguments. The seed is logged (GOBLIN_SEED replays it).
func TestFramingMatchesRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{})
	r := rand.New(rand.NewPCG(testutil.Seed(t), 0))
	mismatches := 0
	for i := range 400 {
		in := randomStream(r)
		want, got := exchange(t, rs.Addr, in), exchange(t, g.Addr, in)
		if !bytes.Equal(want, got) {
			mismatches++
			t.Errorf("stream %d %q:\nredis:  %q\ngoblin: %q", i, in, want, got)
			if mismatches == 5 {
				t.FailNow()
			}
		}
	}
}

// exchange writes in on a new connection to addr, closes its writing
// side, and returns all that comes back until the server closes it.
func exchange(t *testing.T, addr string, in []byte) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(in); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil && !isReset(err) {
		t.Fatalf("reading the replies to %q: %v", in, err)
	}
	return out
}

// isReset reports a connection the server reset: it closed with the
// client's bytes unread, which is as good as closed here.
func isReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }

// randomStream returns one to five requests, each inline or multibulk,
// well formed or not.
func randomStream(r *rand.Rand) []byte {
	var b []byte
	for range 1 + r.IntN(5) {
		if r.IntN(2) == 0 {
			b = appendInline(r, b)
		} else {
			b = appendMultibulk(r, b)
		}
	}
	if r.IntN(8) == 0 && len(b) > 1 {
		b = b[:r.IntN(len(b))] // cut mid-request
	}
	return b
}

// commandName is ECHO or PING in any case.
func commandName(r *rand.Rand) string {
	name := []byte([]string{"ECHO", "PING"}[r.IntN(2)])
	for i := range name {
		if r.IntN(2) == 0 {
			name[i] += 'a' - 'A'
		}
	}
	return string(name)
}

// argByte is a byte an argument may hold: letters that spell no command,
// digits, and every byte that means something to a parser.
func argByte(r *rand.Rand) byte {
	const bytes = "abx019 \t\"'\\\r\n\x00\xff$*:+-"
	return bytes[r.IntN(len(bytes))]
}

func appendInline(r *rand.Rand, b []byte) []byte {
	space := func() string { return []string{" ", "  ", "\t", " \t "}[r.IntN(4)] }
	if r.IntN(6) == 0 {
		b = append(b, []string{"\r\n", "\n", "  \r\n"}[r.IntN(3)]...)
	}
	if r.IntN(4) == 0 {
		b = append(b, space()...)
	}
	b = append(b, commandName(r)...)
	for range r.IntN(3) {
		b = append(b, space()...)
		b = appendToken(r, b)
	}
	if r.IntN(4) == 0 {
		b = append(b, space()...)
	}
	return append(b, []string{"\r\n", "\r\n", "\n", "\r\r\n"}[r.IntN(4)]...)
}

// appendToken appends an inline argument: plain, double-quoted with
// escapes, single-quoted, or quoting gone wrong.
func appendToken(r *rand.Rand, b []byte) []byte {
	plain := func() {
		for range 1 + r.IntN(4) {
			c := argByte(r)
			for c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' || c == '\'' || c == 0 {
				c = "abx019"[r.IntN(6)]
			}
			b = append(b, c)
		}
	}
	switch r.IntN(6) {
	case 0, 1:
		plain()
	case 2:
		b = append(b, '"')
		for range r.IntN(5) {
			switch r.IntN(5) {
			case 0:
				b = append(b, []string{`\n`, `\r`, `\t`, `\b`, `\a`, `\\`, `\"`, `\q`, `\x41`, `\x4g`, `\xff`, `\x`}[r.IntN(12)]...)
			default:
				c := argByte(r)
				if c != '"' && c != '\\' && c != '\n' && c != '\r' && c != 0 {
					b = append(b, c)
				}
			}
		}
		if r.IntN(10) != 0 {
			b = append(b, '"')
		}
	case 3:
		b = append(b, '\'')
		for range r.IntN(5) {
			if r.IntN(4) == 0 {
				b = append(b, []string{`\'`, `\\`, `\n`}[r.IntN(3)]...)
			} else if c := argByte(r); c != '\'' && c != '\\' && c != '\n' && c != '\r' && c != 0 {
				b = append(b, c)
			}
		}
		if r.IntN(10) != 0 {
			b = append(b, '\'')
		}
	case 4:
		// A closing quote with no space after it.
		b = append(b, []string{`"a"b`, `'a'b`, `"a""b"`, `a"b"`, `"`, `'`}[r.IntN(6)]...)
	case 5:
		b = append(b, "\x00ab"...)
	}
	return b
}

func appendMultibulk(r *rand.Rand, b []byte) []byte {
	args := []string{commandName(r)}
	if r.IntN(8) == 0 {
		// No such command: Redis quotes its name and first arguments.
		var name []byte
		for range r.IntN(6) {
			name = append(name, argByte(r))
		}
		args[0] = string(name)
	}
	for range r.IntN(3) {
		var a []byte
		for range r.IntN(6) {
			a = append(a, argByte(r))
		}
		args = append(args, string(a))
	}
	count := strconv.Itoa(len(args))
	switch r.IntN(10) {
	case 0:
		count = strconv.Itoa(len(args) + 1)
	case 1:
		count = []string{"0", "-1", "-5", "x", "", "01", "+1", " 1", "2147483648"}[r.IntN(9)]
	}
	b = append(b, '*')
	b = append(b, count...)
	b = append(b, crlf(r)...)
	for i, a := range args {
		prefix, n := "$", strconv.Itoa(len(a))
		switch r.IntN(14) {
		case 0:
			n = strconv.Itoa(len(a) + 1)
		case 1:
			if len(a) > 0 {
				n = strconv.Itoa(len(a) - 1)
			}
		case 2:
			n = []string{"-1", "x", "", "01", "+1", "536870913"}[r.IntN(6)]
		case 3:
			prefix = []string{":", "+", "*", "a"}[r.IntN(4)]
		}
		b = append(b, prefix...)
		b = append(b, n...)
		b = append(b, crlf(r)...)
		b = append(b, a...)
		if r.IntN(8) == 0 {
			// Redis skips any two bytes. After the name they are not NUL:
			// with the length one too long the name would end in one, and
			// Redis's command table compares names up to a NUL but hashes
			// every byte, so such a name finds its command only when the
			// hash seed Redis picks at start puts both in one bucket.
			c := argByte(r)
			for i == 0 && c == 0 {
				c = argByte(r)
			}
			b = append(b, c, argByte(r))
		} else {
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// crlf ends a multibulk header line: Redis looks for '\r' and skips the
// byte after it, whatever it is.
func crlf(r *rand.Rand) string {
	if r.IntN(10) == 0 {
		return []string{"\rx", "\n", "\r\r\n"}[r.IntN(3)]
	}
	return "\r\n"
}
