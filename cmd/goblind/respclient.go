package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// respClient is the small RESP2 client goblind's subcommands use to talk
// to a node or to a Redis server: pipelined requests, replies read in
// order, no client library.
type respClient struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	num  []byte
}

// reply is one RESP2 reply. err is set for an error reply.
type reply struct {
	kind byte // '+', '-', ':', '$', '*'
	str  []byte
	n    int64
	arr  []reply
	null bool
}

// errorReply is a server's error reply.
type errorReply string

func (e errorReply) Error() string { return string(e) }

// dialRESP connects to addr (with TLS when tlsConfig is set) and
// authenticates (AUTH pass, or AUTH user pass) when pass is set.
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
	c.num = append(strconv.AppendInt(append(c.num[:0], '*'), int64(len(args)), 10), '\r', '\n')
	if _, err := c.w.Write(c.num); err != nil {
		return err
	}
	for _, a := range args {
		c.num = append(strconv.AppendInt(append(c.num[:0], '$'), int64(len(a)), 10), '\r', '\n')
		c.w.Write(c.num)
		c.w.Write(a)
		if _, err := c.w.WriteString("\r\n"); err != nil {
			return err
		}
	}
	return nil
}

func (c *respClient) sendStrings(args ...string) error {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return c.send(b...)
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
	if err == nil && r.kind == '-' {
		err = errorReply(r.str)
	}
	return r, err
}

// read reads one reply.
func (c *respClient) read() (reply, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return reply{}, fmt.Errorf("reply line too long")
		}
		return reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return reply{}, fmt.Errorf("malformed reply %q", line)
	}
	r := reply{kind: line[0]}
	body := line[1 : len(line)-2]
	switch r.kind {
	case '+', '-':
		r.str = append([]byte(nil), body...)
		return r, nil
	}
	n, err := strconv.ParseInt(string(body), 10, 64)
	if err != nil {
		return reply{}, fmt.Errorf("malformed reply %q", line)
	}
	r.n = n
	switch r.kind {
	case ':':
	case '$':
		if n < 0 {
			r.null = true
			return r, nil
		}
		if n > 1<<32 {
			return reply{}, fmt.Errorf("bulk reply of %d bytes", n)
		}
		r.str = make([]byte, n+2)
		if _, err := io.ReadFull(c.r, r.str); err != nil {
			return reply{}, err
		}
		r.str = r.str[:n]
	case '*':
		if n < 0 {
			r.null = true
			return r, nil
		}
		for range n {
			e, err := c.read()
			if err != nil {
				return reply{}, err
			}
			r.arr = append(r.arr, e)
		}
	default:
		return reply{}, fmt.Errorf("unexpected reply %q", line)
	}
	return r, nil
}
