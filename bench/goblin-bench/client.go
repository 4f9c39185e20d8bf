package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// conn is a minimal RESP2 client: commands are appended to a buffered
// writer and replies are parsed straight from a buffered reader, so the
// tool itself costs as little CPU as possible per command.
type conn struct {
	nc  net.Conn
	w   *bufio.Writer
	r   *bufio.Reader
	tmp []byte
}

// dial connects to a RESP endpoint: host:port, or a Unix socket path.
func dial(addr string) (*conn, error) {
	network := "tcp"
	if strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "unix:") {
		network, addr = "unix", strings.TrimPrefix(addr, "unix:")
	}
	nc, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &conn{nc: nc, w: bufio.NewWriterSize(nc, 64<<10), r: bufio.NewReaderSize(nc, 64<<10)}, nil
}

func (c *conn) close() error { return c.nc.Close() }

// cmd appends one command; args may be string, []byte, int or int64.
func (c *conn) cmd(args ...any) {
	c.tmp = c.tmp[:0]
	c.tmp = append(c.tmp, '*')
	c.tmp = strconv.AppendInt(c.tmp, int64(len(args)), 10)
	c.tmp = append(c.tmp, '\r', '\n')
	for _, a := range args {
		switch v := a.(type) {
		case string:
			c.tmp = appendBulk(c.tmp, v)
		case []byte:
			c.tmp = appendBulk(c.tmp, string(v))
		case int:
			c.tmp = appendBulkInt(c.tmp, int64(v))
		case int64:
			c.tmp = appendBulkInt(c.tmp, v)
		default:
			panic(fmt.Sprintf("goblin-bench: argument of type %T", a))
		}
	}
	c.w.Write(c.tmp)
}

// raw appends bytes that are already a RESP command.
func (c *conn) raw(b []byte) { c.w.Write(b) }

func (c *conn) flush() error { return c.w.Flush() }

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	return appendBulk(b, string(strconv.AppendInt(tmp[:0], n, 10)))
}

// errReply is a RESP error reply.
type errReply string

func (e errReply) Error() string { return string(e) }

// line reads one CRLF-terminated line, without the CRLF. The slice is only
// valid until the next read.
func (c *conn) line() ([]byte, error) {
	l, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("protocol error: bad line %q", l)
	}
	return l[:len(l)-2], nil
}

// skip reads one reply of any shape and discards it; an error reply is
// returned as errReply (after the whole reply was consumed).
func (c *conn) skip() error {
	l, err := c.line()
	if err != nil {
		return err
	}
	switch l[0] {
	case '+', ':', ',', '#', '_':
		return nil
	case '-':
		return errReply(l[1:])
	case '$', '=', '!':
		n, err := atoi(l[1:])
		if err != nil || n < 0 {
			return err
		}
		_, err = c.r.Discard(n + 2)
		return err
	case '*', '~', '%', '>':
		n, err := atoi(l[1:])
		if err != nil {
			return err
		}
		if l[0] == '%' {
			n *= 2
		}
		var first error
		for i := 0; i < n; i++ {
			if err := c.skip(); err != nil {
				var er errReply
				if !errors.As(err, &er) {
					return err
				}
				if first == nil {
					first = err
				}
			}
		}
		return first
	}
	return fmt.Errorf("protocol error: unexpected %q", l)
}

// value is a parsed reply: a string (simple or bulk), an integer, an
// array, nil, or an error.
type value struct {
	kind  byte // '+', ':', '$', '*', '-', or 0 for nil
	str   string
	n     int64
	elems []value
}

// read reads and returns one reply.
func (c *conn) read() (value, error) {
	l, err := c.line()
	if err != nil {
		return value{}, err
	}
	switch l[0] {
	case '+', '-':
		return value{kind: l[0], str: string(l[1:])}, nil
	case ':':
		n, err := strconv.ParseInt(string(l[1:]), 10, 64)
		return value{kind: ':', n: n}, err
	case '$':
		n, err := atoi(l[1:])
		if err != nil {
			return value{}, err
		}
		if n < 0 {
			return value{}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return value{}, err
		}
		return value{kind: '$', str: string(buf[:n])}, nil
	case '*':
		n, err := atoi(l[1:])
		if err != nil {
			return value{}, err
		}
		if n < 0 {
			return value{}, nil
		}
		v := value{kind: '*', elems: make([]value, n)}
		for i := range v.elems {
			if v.elems[i], err = c.read(); err != nil {
				return value{}, err
			}
		}
		return v, nil
	}
	return value{}, fmt.Errorf("protocol error: unexpected %q", l)
}

// do sends one command and returns its reply; an error reply is an error.
func (c *conn) do(args ...any) (value, error) {
	c.cmd(args...)
	if err := c.flush(); err != nil {
		return value{}, err
	}
	v, err := c.read()
	if err == nil && v.kind == '-' {
		err = errReply(v.str)
	}
	return v, err
}

func atoi(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errors.New("protocol error: empty length")
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("protocol error: bad length %q", b)
		}
		n = n*10 + int(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}
