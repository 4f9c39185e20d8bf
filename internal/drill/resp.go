package drill

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// reply is one parsed RESP2 reply.
type reply struct {
	kind  byte // '+', '-', ':', '$', '*'
	str   string
	num   int64
	array []reply
	null  bool
}

// errorReply is a RESP error reply ("-CODE text").
type errorReply string

func (e errorReply) Error() string { return string(e) }

// conn is one RESP connection to a node, used by one goroutine at a time:
// a command is written, then its reply read, each under a deadline.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
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
	c.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		c.w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n")
		c.w.WriteString(a)
		c.w.WriteString("\r\n")
	}
	if err := c.w.Flush(); err != nil {
		return reply{}, fmt.Errorf("%w: %w", errSent, err)
	}
	r, err := readReply(c.r)
	if err != nil {
		return reply{}, fmt.Errorf("%w: %w", errSent, err)
	}
	if r.kind == '-' {
		return r, errorReply(r.str)
	}
	return r, nil
}

// readReply parses one RESP2 reply.
func readReply(r *bufio.Reader) (reply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return reply{}, fmt.Errorf("malformed reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+', '-':
		return reply{kind: kind, str: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return reply{kind: kind, num: n}, err
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return reply{}, err
		}
		if n < 0 {
			return reply{kind: kind, null: true}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return reply{}, err
		}
		return reply{kind: kind, str: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return reply{}, err
		}
		if n < 0 {
			return reply{kind: kind, null: true}, nil
		}
		out := reply{kind: kind, array: make([]reply, n)}
		for i := range out.array {
			if out.array[i], err = readReply(r); err != nil {
				return reply{}, err
			}
		}
		return out, nil
	}
	return reply{}, fmt.Errorf("unknown reply type %q", kind)
}

// pairs turns a flat array reply of key/value pairs into a map.
func (r reply) pairs() map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(r.array); i += 2 {
		v := r.array[i+1]
		switch v.kind {
		case ':':
			m[r.array[i].str] = strconv.FormatInt(v.num, 10)
		default:
			m[r.array[i].str] = v.str
		}
	}
	return m
}
