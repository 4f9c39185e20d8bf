package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/node"
)

// readConns is how many connections per leader carry read-index and admin
// requests (entries have their own, ordered, connection).
const readConns = 2

// forwarder keeps pipelined connections to leaders, by leader ID.
//
// Entries travel on one connection per leader: the leader executes a
// connection's requests in order, so entries a client pipelines through
// a follower are applied in the order it sent them. Read-index and admin
// requests, which need no order, spread over a small pool.
type forwarder struct {
	lookup func(id string) (string, bool)
	dialer func(addr string) (net.Conn, error)

	mu     sync.Mutex
	peers  map[string]*peerConns
	closed bool
}

type peerConns struct {
	addr    string
	ordered *conn
	pool    [readConns]*conn
	next    atomic.Uint32
}

func newForwarder(lookup func(string) (string, bool), dialer func(string) (net.Conn, error)) *forwarder {
	return &forwarder{lookup: lookup, dialer: dialer, peers: map[string]*peerConns{}}
}

var errUnknownAddr = errors.New("the leader's address is not known yet")

// get returns a usable connection to the leader: the ordered one, or one
// of the pool. Broken connections are replaced.
func (f *forwarder) get(leader string, ordered bool) (*conn, error) {
	addr, ok := f.lookup(leader)
	if !ok {
		return nil, fmt.Errorf("%w (%s)", errUnknownAddr, leader)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, node.ErrClosed
	}
	p := f.peers[leader]
	if p == nil || p.addr != addr {
		if p != nil {
			p.close()
		}
		p = &peerConns{addr: addr}
		f.peers[leader] = p
	}
	slot := &p.ordered
	if !ordered {
		slot = &p.pool[p.next.Add(1)%readConns]
	}
	if *slot != nil && !(*slot).broken() {
		return *slot, nil
	}
	// Dialing under the lock keeps one connection per slot; a dial is
	// bounded by dialTimeout, and only requests to this node wait on it.
	c, err := f.dial(addr)
	if err != nil {
		return nil, err
	}
	c.gather = ordered
	*slot = c
	return c, nil
}

func (f *forwarder) dial(addr string) (*conn, error) {
	nc, err := f.dialer(addr)
	if err != nil {
		return nil, err
	}
	return newConn(nc), nil
}

func (p *peerConns) close() {
	if p.ordered != nil {
		p.ordered.close()
	}
	for _, c := range p.pool {
		if c != nil {
			c.close()
		}
	}
}

func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, p := range f.peers {
		p.close()
	}
}

// apply sends an entry on the leader's ordered connection.
func (f *forwarder) apply(leader string, entry []byte) (node.Forwarded, error) {
	c, err := f.get(leader, true)
	if err != nil {
		return nil, err
	}
	cl, err := c.send([]byte(cmdApply), entry)
	if err != nil {
		return nil, err
	}
	return &forwarded{cl: cl, leader: leader}, nil
}

// forwarded is an entry sent to the leader (node.Forwarded).
type forwarded struct {
	cl     *call
	leader string
}

func (fw *forwarded) Done() <-chan struct{} { return fw.cl.done }

// Result reads GOBLIN.APPLY's reply: [index, reply], or the sentinel the
// leader named; a connection that broke after the entry was sent gives
// node.ErrUncertain: the entry may have been applied. One that broke
// before gives node.ErrNoLeader: the entry is proposed again.
func (fw *forwarded) Result() (uint64, []byte, error) {
	v, err := fw.cl.reply, fw.cl.err
	if errors.Is(err, errNotSent) {
		return 0, nil, fmt.Errorf("%w (%v)", node.ErrNoLeader, err)
	}
	if err != nil {
		return 0, nil, node.ErrUncertain
	}
	if err := replyErr(fw.leader, v); err != nil {
		return 0, nil, err
	}
	if v.Kind != '*' || len(v.Array) != 2 || v.Array[0].Kind != ':' || v.Array[1].Kind != '$' {
		return 0, nil, fmt.Errorf("leader %s: malformed %s reply", fw.leader, cmdApply)
	}
	return uint64(v.Array[0].Num), v.Array[1].Str, nil
}

// readIndex asks the leader for its read index.
func (f *forwarder) readIndex(ctx context.Context, leader string) (uint64, error) {
	v, err := f.call(ctx, leader, cmdReadIndex)
	if err != nil {
		return 0, err
	}
	if v.Kind != ':' {
		return 0, fmt.Errorf("leader %s: malformed %s reply", leader, cmdReadIndex)
	}
	return uint64(v.Num), nil
}

// follows asks the voter id whether it follows leader in term, and how
// long before the request reached it it last heard from it. A build that
// does not know the request answers node.ErrPeerTooOld.
func (f *forwarder) follows(ctx context.Context, id, leader string, term uint64) (time.Duration, error) {
	v, err := f.call(ctx, id, cmdFollows, leader, strconv.FormatUint(term, 10))
	if err != nil {
		if strings.Contains(err.Error(), "unknown internal request") {
			return 0, fmt.Errorf("%w: %w", node.ErrPeerTooOld, err)
		}
		return 0, err
	}
	if v.Kind != ':' || v.Num < 0 {
		return 0, fmt.Errorf("node %s: malformed %s reply", id, cmdFollows)
	}
	return time.Duration(v.Num), nil
}

// admin runs a membership change on the leader.
func (f *forwarder) admin(ctx context.Context, leader string, args ...string) error {
	_, err := f.call(ctx, leader, append([]string{cmdAdmin}, args...)...)
	return err
}

// call runs one request on a pooled connection and returns its reply, or
// the error the leader answered.
func (f *forwarder) call(ctx context.Context, leader string, args ...string) (value, error) {
	c, err := f.get(leader, false)
	if err != nil {
		return value{}, err
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	cl, err := c.send(argv...)
	if err != nil {
		return value{}, err
	}
	v, err := cl.wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return value{}, node.ErrTimeout
		}
		return value{}, err
	}
	return v, replyErr(leader, v)
}

// replyErr turns an error reply into the node sentinel it names, or into
// an error carrying the leader's text.
func replyErr(leader string, v value) error {
	if v.Kind != '-' {
		return nil
	}
	if err := node.FromWire(string(v.Str)); err != nil {
		return err
	}
	return fmt.Errorf("leader %s: %s", leader, v.Str)
}
