package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/goblindb/goblin/resp/wire"
)

// conn is one pipelined RESP connection to a peer. Requests are written in
// the order send is called and the peer answers them in that order, so a
// FIFO of waiting calls pairs every reply with its request; any number of
// requests may be in flight. When the connection breaks, every call still
// waiting fails with errBroken.
//
// Writes are combined: the sender that finds no write under way writes
// what is pending, then what other senders appended meanwhile, until
// nothing is left; the others return at once. Under load one system call
// carries many requests, and the peer wakes once for them. On a
// connection that gathers (the one carrying forwarded entries), that
// sender first lets the goroutines already runnable run: a batch of
// applied writes wakes many clients at once, each about to forward its
// next write, and they append it meanwhile. With 50 clients writing
// through a follower, one write carried about one request without the
// yield, about four with it. Read-index requests do not gather: one round
// at a time is in flight, and all the readers waiting on a follower wait
// for it (yielding there made a follower's linearizable reads 12% slower).
type conn struct {
	nc net.Conn

	mu      sync.Mutex // guards pend, spare, writing, unsent, queue and err
	pend    []byte     // requests appended and not yet handed to a write
	spare   []byte     // the other buffer, reused
	writing bool       // a sender is writing; it writes what is appended meanwhile
	unsent  int        // the calls at the end of queue whose requests are in pend
	queue   []*call
	err     error
	closed  chan struct{}

	// gather: a sender lets runnable goroutines append before it writes.
	// Set before the connection is shared.
	gather bool
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

// errNotSent: the connection failed before the request was handed to a
// write; the peer never saw it.
var errNotSent = errors.New("connection to the leader broke before the request was sent")

// value is a parsed RESP2 reply.
type value = wire.Reply

const dialTimeout = time.Second

// newConn starts a pipelined connection over nc.
func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(nc, 32<<10))
	return c
}

// maxSpare is the largest write buffer a connection keeps for reuse.
const maxSpare = 1 << 20

// send queues a command and returns its call; an error means nothing was
// sent (the connection had already failed). The call fails with errBroken
// if the connection breaks once its request was handed to a write, and
// with errNotSent if it breaks before.
func (c *conn) send(args ...[]byte) (*call, error) {
	cl := &call{done: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.pend = wire.AppendCommand(c.pend, args...)
	c.queue = append(c.queue, cl)
	c.unsent++
	if c.writing {
		return cl, nil
	}
	c.writing = true
	if c.gather {
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
	for len(c.pend) > 0 && c.err == nil {
		buf := c.pend
		c.pend = c.spare[:0]
		c.unsent = 0
		c.mu.Unlock()
		_, err := c.nc.Write(buf)
		c.mu.Lock()
		if cap(buf) <= maxSpare {
			c.spare = buf[:0]
		}
		if err != nil {
			// Part of buf may have left: its calls are uncertain
			// (errBroken); those appended since were never sent.
			c.failLocked(err)
		}
	}
	c.writing = false
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
	sent := len(c.queue) - c.unsent
	notSent := fmt.Errorf("%w: %v", errNotSent, err)
	for i, cl := range c.queue {
		cl.err = c.err
		if i >= sent {
			cl.err = notSent
		}
		close(cl.done)
	}
	c.queue, c.unsent = nil, 0
	close(c.closed)
}

func (c *conn) readLoop(br *bufio.Reader) {
	for {
		// wire's default limits: a confused peer cannot make this node
		// allocate without bound.
		v, err := wire.ReadReply(br)
		c.mu.Lock()
		if err != nil {
			c.failLocked(err)
			c.mu.Unlock()
			return
		}
		if len(c.queue) <= c.unsent {
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
