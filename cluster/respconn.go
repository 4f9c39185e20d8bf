package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// conn is one pipelined RESP connection to a peer. Requests are written in
// the order send is called and the peer answers them in that order, so a
// FIFO of waiting calls pairs every reply with its request; any number of
// requests may be in flight. When the connection breaks, every call still
// waiting fails with errBroken.
type conn struct {
	nc net.Conn

	mu     sync.Mutex // guards bw, queue and err; held while writing
	bw     *bufio.Writer
	queue  []*call
	err    error
	closed chan struct{}
}

// call is one request waiting for its reply.
type call struct {
	done  chan struct{}
	reply value
	err   error
}

// errBroken: the connection failed after the request was written; the
// peer may or may not have acted on it.
var errBroken = errors.New("connection to the leader broke")

// value is a parsed RESP2 reply.
type value struct {
	kind  byte // '+', '-', ':', '$', '*'
	str   []byte
	num   int64
	array []value
	null  bool
}

const dialTimeout = time.Second

// newConn starts a pipelined connection over nc.
func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, bw: bufio.NewWriterSize(nc, 32<<10), closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(nc, 32<<10))
	return c
}

// send writes a command and returns its call; an error means nothing was
// written (the connection had already failed).
func (c *conn) send(args ...[]byte) (*call, error) {
	cl := &call{done: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.bw.WriteString("*")
	c.bw.WriteString(strconv.Itoa(len(args)))
	c.bw.WriteString("\r\n")
	for _, a := range args {
		c.bw.WriteString("$")
		c.bw.WriteString(strconv.Itoa(len(a)))
		c.bw.WriteString("\r\n")
		c.bw.Write(a)
		c.bw.WriteString("\r\n")
	}
	c.queue = append(c.queue, cl)
	if err := c.bw.Flush(); err != nil {
		// Part of the request may have left: the call is uncertain,
		// and fails with the rest when the connection is torn down.
		c.failLocked(err)
	}
	return cl, nil
}

// wait waits for the call's reply.
func (cl *call) wait(ctx context.Context) (value, error) {
	select {
	case <-cl.done:
		return cl.reply, cl.err
	case <-ctx.Done():
		return value{}, ctx.Err()
	}
}

// broken reports whether the connection has failed.
func (c *conn) broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

func (c *conn) close() {
	c.mu.Lock()
	c.failLocked(net.ErrClosed)
	c.mu.Unlock()
}

func (c *conn) failLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = fmt.Errorf("%w: %v", errBroken, err)
	c.nc.Close()
	for _, cl := range c.queue {
		cl.err = c.err
		close(cl.done)
	}
	c.queue = nil
	close(c.closed)
}

func (c *conn) readLoop(br *bufio.Reader) {
	for {
		v, err := readValue(br, 0)
		c.mu.Lock()
		if err != nil {
			c.failLocked(err)
			c.mu.Unlock()
			return
		}
		if len(c.queue) == 0 {
			c.failLocked(errors.New("reply without a request"))
			c.mu.Unlock()
			return
		}
		cl := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		cl.reply = v
		close(cl.done)
	}
}

// Limits on what a peer may send back, so a confused peer cannot make
// this node allocate without bound.
const (
	maxBulk  = 512 << 20
	maxArray = 1 << 20
	maxDepth = 8
)

// readValue reads one RESP2 reply.
func readValue(br *bufio.Reader, depth int) (value, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return value{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return value{}, errors.New("malformed reply line")
	}
	v := value{kind: line[0]}
	body := line[1 : len(line)-2]
	switch v.kind {
	case '+', '-':
		v.str = append([]byte(nil), body...)
	case ':':
		if v.num, err = strconv.ParseInt(string(body), 10, 64); err != nil {
			return value{}, err
		}
	case '$':
		n, err := strconv.Atoi(string(body))
		if err != nil || n > maxBulk {
			return value{}, errors.New("malformed bulk length")
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		v.str = make([]byte, n+2)
		if _, err := io.ReadFull(br, v.str); err != nil {
			return value{}, err
		}
		v.str = v.str[:n]
	case '*':
		n, err := strconv.Atoi(string(body))
		if err != nil || n > maxArray || depth >= maxDepth {
			return value{}, errors.New("malformed array length")
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		v.array = make([]value, n)
		for i := range v.array {
			if v.array[i], err = readValue(br, depth+1); err != nil {
				return value{}, err
			}
		}
	default:
		return value{}, fmt.Errorf("unexpected reply type %q", v.kind)
	}
	return v, nil
}
