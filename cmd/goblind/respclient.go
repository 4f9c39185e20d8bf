package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/goblindb/goblin/resp/wire"
)

// respClient is the small RESP2 client goblind's subcommands use to talk
// to a node or to a Redis server: pipelined requests, replies read in
// order, no client library.
type respClient struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	enc  []byte
}

// reply is one RESP2 reply.
type reply = wire.Reply

// replyLimits bound the replies read: a backup arrives as one bulk string
// (up to 4 GiB), an import's SCAN or ZRANGE chunk as one array.
var replyLimits = wire.Limits{MaxBulk: 1 << 32, MaxArray: 1 << 26, MaxDepth: 8}

// dialRESP connects to addr (with TLS when tlsConfig is set) and
// authenticates (AUTH pass, or AUTH user pass) when pass is set, both
// within ctx.
func dialRESP(ctx context.Context, addr string, tlsConfig *tls.Config, user, pass string) (*respClient, error) {
	var d net.Dialer
	var conn net.Conn
	var err error
	if tlsConfig != nil {
		conn, err = (&tls.Dialer{NetDialer: &d, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	c := &respClient{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), w: bufio.NewWriterSize(conn, 64<<10)}
	if dl, ok := ctx.Deadline(); ok {
		// ctx bounds the dial and the AUTH, not what the caller does next.
		conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	if pass != "" {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := c.do(args...); err != nil {
			conn.Close()
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	return c, nil
}

func (c *respClient) Close() error { return c.conn.Close() }

// send buffers one command.
func (c *respClient) send(args ...[]byte) error {
	c.enc = wire.AppendCommand(c.enc[:0], args...)
	_, err := c.w.Write(c.enc)
	return err
}

func (c *respClient) sendStrings(args ...string) error {
	c.enc = wire.AppendCommandStrings(c.enc[:0], args...)
	_, err := c.w.Write(c.enc)
	return err
}

func (c *respClient) flush() error { return c.w.Flush() }

// do sends one command and reads its reply; an error reply is an error.
func (c *respClient) do(args ...string) (reply, error) {
	if err := c.sendStrings(args...); err != nil {
		return reply{}, err
	}
	if err := c.flush(); err != nil {
		return reply{}, err
	}
	r, err := c.read()
	if err == nil {
		err = r.Err()
	}
	return r, err
}

// read reads one reply.
func (c *respClient) read() (reply, error) { return wire.ReadReplyWithin(c.r, replyLimits) }
