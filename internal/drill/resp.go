package drill

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/goblindb/goblin/resp/wire"
)

// reply is one parsed RESP2 reply.
type reply = wire.Reply

// errorReply is a RESP error reply ("-CODE text").
type errorReply = wire.Error

// conn is one RESP connection to a node, used by one goroutine at a time:
// a command is written, then its reply read, each under a deadline.
type conn struct {
	nc  net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	enc []byte
}

// dialOptions say how to reach and authenticate with a node.
type dialOptions struct {
	user, password string
	tls            *tls.Config
	timeout        time.Duration // dial and AUTH
}

// errDial marks a failure to connect or authenticate: no command was sent.
var errDial = errors.New("could not connect")

// dial connects to addr and authenticates. A failure wraps errDial.
func dial(addr string, o dialOptions) (*conn, error) {
	d := net.Dialer{Timeout: o.timeout}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDial, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if o.tls != nil {
		tc := tls.Client(nc, o.tls)
		tc.SetDeadline(time.Now().Add(o.timeout))
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return nil, fmt.Errorf("%w: TLS: %w", errDial, err)
		}
		nc = tc
	}
	c := &conn{nc: nc, r: bufio.NewReaderSize(nc, 16<<10), w: bufio.NewWriterSize(nc, 4<<10)}
	if o.password != "" {
		args := []string{"AUTH", o.password}
		if o.user != "" {
			args = []string{"AUTH", o.user, o.password}
		}
		if _, err := c.do(o.timeout, args...); err != nil {
			c.close()
			return nil, fmt.Errorf("%w: AUTH: %w", errDial, err)
		}
	}
	return c, nil
}

func (c *conn) close() error { return c.nc.Close() }

// errSent marks a failure after the command was (maybe) written: the
// node may have acted on it.
var errSent = errors.New("no reply")

// do sends one command and reads its reply within d. An error reply is
// returned as errorReply with no other error; a network failure after
// the write started wraps errSent, and the connection must be dropped.
func (c *conn) do(d time.Duration, args ...string) (reply, error) {
	c.nc.SetDeadline(time.Now().Add(d))
	c.enc = wire.AppendCommandStrings(c.enc[:0], args...)
	c.w.Write(c.enc)
	if err := c.w.Flush(); err != nil {
		return reply{}, fmt.Errorf("%w: %w", errSent, err)
	}
	r, err := wire.ReadReply(c.r)
	if err != nil {
		return reply{}, fmt.Errorf("%w: %w", errSent, err)
	}
	return r, r.Err()
}

// pairs turns a flat array reply of key/value pairs into a map.
func pairs(r reply) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(r.Array); i += 2 {
		v := r.Array[i+1]
		switch v.Kind {
		case ':':
			m[string(r.Array[i].Str)] = strconv.FormatInt(v.Num, 10)
		default:
			m[string(r.Array[i].Str)] = string(v.Str)
		}
	}
	return m
}
