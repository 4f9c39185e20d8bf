package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/goblindb/goblin/resp/wire"
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
	c.tmp = wire.AppendArrayLen(c.tmp[:0], len(args))
	for _, a := range args {
		switch v := a.(type) {
		case string:
			c.tmp = wire.AppendBulkString(c.tmp, v)
		case []byte:
			c.tmp = wire.AppendBulk(c.tmp, v)
		case int:
			c.tmp = wire.AppendBulkInt(c.tmp, int64(v))
		case int64:
			c.tmp = wire.AppendBulkInt(c.tmp, v)
		default:
			panic(fmt.Sprintf("goblin-bench: argument of type %T", a))
		}
	}
	c.w.Write(c.tmp)
}

// raw appends bytes that are already a RESP command.
func (c *conn) raw(b []byte) { c.w.Write(b) }

func (c *conn) flush() error { return c.w.Flush() }

// errReply is a RESP error reply.
type errReply = wire.Error

// skip reads one reply of any shape and discards it; an error reply is
// returned as errReply (after the whole reply was consumed).
func (c *conn) skip() error { return wire.SkipReply(c.r) }

// value is a parsed reply.
type value = wire.Reply

// read reads and returns one reply.
func (c *conn) read() (value, error) { return wire.ReadReply(c.r) }

// do sends one command and returns its reply; an error reply is an error.
func (c *conn) do(args ...any) (value, error) {
	c.cmd(args...)
	if err := c.flush(); err != nil {
		return value{}, err
	}
	v, err := c.read()
	if err == nil {
		err = v.Err()
	}
	return v, err
}
