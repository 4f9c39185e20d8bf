package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// The node-to-node plane: one listener, on the node's Raft address, for
// everything nodes say to each other apart from gossip. A connection is
// mutual TLS when the cluster has credentials, and plain TCP otherwise (the
// caller allows that on loopback only). After the handshake the dialer
// names what the connection carries in a five-byte preamble: planeMagic
// and a kind. Raft's RPCs go to hashicorp/raft's network transport
// through the StreamLayer below; internal requests (forwarded entries,
// read indexes, membership changes) go to the cluster's internal server.
// A connection that does not complete the handshake and the preamble
// within handshakeTimeout is closed.
//
// Raft's connections name the node they are for (kindRaftTo): the
// preamble is followed by the target's ID, and the listener answers one
// byte, targetOK, or targetWrong and closes the connection when it is
// another node's. Raft reaches a server at an address, and an address a
// configuration records can belong to another node by then (nodes
// restarted at each other's addresses): that node would answer requests
// meant for the other, and a candidate reaching itself under another
// node's ID would count its own vote twice. A node that gossips no
// support for it (an older build) is dialed as kindRaft, naming no one.

// planeMagic starts every preamble; its last byte is the version.
const planeMagic = "GOB\x01"

// Connection kinds: the preamble's last byte.
const (
	kindRaft     byte = 'R'
	kindRaftTo   byte = 'T'
	kindInternal byte = 'I'
)

// planeTargets is the Meta.Plane of a node whose listener takes
// kindRaftTo connections.
const planeTargets = 1

// The listener's answer to a kindRaftTo preamble.
const (
	targetOK    byte = '+'
	targetWrong byte = '-'
)

// maxTargetID is the longest ID a kindRaftTo preamble names (its length
// is one byte); a node with a longer one is dialed as kindRaft.
const maxTargetID = 255

// errNotTarget: a kindRaftTo connection reached another node than the one
// it names.
var errNotTarget = errors.New("another node holds that address now")

// handshakeTimeout bounds the TLS handshake and the preamble.
const handshakeTimeout = 5 * time.Second

// plane is a node's node-to-node listener.
type plane struct {
	// id is this node's: the target a kindRaftTo connection must name.
	id    string
	ln    net.Listener
	adv   net.Addr
	creds Credentials // nil: plain TCP
	log   hclog.Logger

	raftConns chan net.Conn
	// internal serves internal connections; nil until the cluster starts
	// (connections arriving before are closed).
	internal atomic.Pointer[func(net.Conn)]

	mu     sync.Mutex
	conns  map[*planeConn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup

	// pending bounds the connections that have not yet completed their
	// handshake and preamble.
	pending *connBound
	// dials is cancelled when the plane closes: dials under way end.
	dials       context.Context
	cancelDials context.CancelFunc
}

// maxDialTime bounds the TCP connect of a dial, whatever the caller
// allows (Raft allows its whole RPC timeout, 10 s): a peer that answers
// connects in milliseconds, or after a lost SYN is sent again, 1 s later.
// A node whose address no longer exists (a stopped container's IP) never
// answers, and Raft waits for its dials when it shuts down: nodes stopped
// together would each wait out the whole timeout.
const maxDialTime = 3 * time.Second

// Connections not yet admitted are bounded (connBound), in all and from
// one host: anyone who reaches the port can open them, and each holds a
// descriptor for up to handshakeTimeout. A peer's handshake takes
// milliseconds, and it keeps its connections once admitted.
const (
	maxPending        = 256
	maxPendingPerHost = 64
)

// listenPlane listens on bind for node id. advertise is the address peers
// dial (a host name is resolved now); empty means the bound address.
func listenPlane(id, bind, advertise string, creds Credentials, log hclog.Logger) (*plane, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("cluster: node-to-node listener: %w", err)
	}
	adv := ln.Addr()
	if ip := adv.(*net.TCPAddr).IP; advertise == "" && ip.IsUnspecified() {
		ln.Close()
		return nil, fmt.Errorf("cluster: the node-to-node listener %s needs an address peers can reach to advertise", bind)
	}
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("cluster: node-to-node advertise address: %w", err)
		}
		if a.IP == nil || a.IP.IsUnspecified() {
			ln.Close()
			return nil, fmt.Errorf("cluster: node-to-node advertise address %q is not one peers can reach", advertise)
		}
		adv = a
	}
	p := &plane{id: id, ln: ln, adv: adv, creds: creds, log: log, raftConns: make(chan net.Conn), conns: map[*planeConn]struct{}{}, done: make(chan struct{}),
		pending: newConnBound(maxPending, maxPendingPerHost)}
	p.dials, p.cancelDials = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

func (p *plane) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, for instance: back off and go on.
			p.log.Warn("node-to-node accept failed", "error", err)
			select {
			case <-p.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		host := remoteHost(c)
		if !p.pending.acquire(host) {
			p.log.Warn("node-to-node connection refused: too many connections waiting for their handshake",
				"remote", c.RemoteAddr(), "limit", maxPending, "per-host", maxPendingPerHost)
			c.Close()
			continue
		}
		pc := p.track(c)
		if pc == nil {
			p.pending.release(host)
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.admit(pc, host)
		}()
	}
}

// admit completes an accepted connection's handshake and preamble, then
// hands it to its user.
func (p *plane) admit(pc *planeConn, host string) {
	kind, err := p.accept(pc)
	p.pending.release(host)
	if err != nil {
		p.log.Debug("refused a node-to-node connection", "remote", pc.RemoteAddr(), "error", err)
		pc.Close()
		return
	}
	switch kind {
	case kindRaft:
		select {
		case p.raftConns <- pc:
		case <-p.done:
			pc.Close()
		}
	case kindInternal:
		if h := p.internal.Load(); h != nil {
			(*h)(pc)
			return
		}
		pc.Close()
	}
}

// accept runs the server side of the handshake and reads the preamble.
func (p *plane) accept(pc *planeConn) (byte, error) {
	pc.SetDeadline(time.Now().Add(handshakeTimeout))
	if p.creds != nil {
		tc := tls.Server(pc.Conn, p.creds.ServerConfig())
		if err := tc.Handshake(); err != nil {
			return 0, fmt.Errorf("TLS handshake: %w", err)
		}
		pc.Conn = tc
	}
	kind, err := readPreamble(pc)
	if err != nil {
		return 0, err
	}
	if kind == kindRaftTo {
		if err := p.acceptTarget(pc); err != nil {
			return 0, err
		}
		kind = kindRaft
	}
	pc.SetDeadline(time.Time{})
	return kind, nil
}

// acceptTarget reads the node a kindRaftTo connection is for and answers
// whether it is this one.
func (p *plane) acceptTarget(pc *planeConn) error {
	var n [1]byte
	if _, err := io.ReadFull(pc, n[:]); err != nil {
		return fmt.Errorf("preamble: %w", err)
	}
	to := make([]byte, n[0])
	if _, err := io.ReadFull(pc, to); err != nil {
		return fmt.Errorf("preamble: %w", err)
	}
	if string(to) != p.id {
		pc.Write([]byte{targetWrong})
		return fmt.Errorf("Raft traffic for node %q: %w", to, errNotTarget)
	}
	_, err := pc.Write([]byte{targetOK})
	return err
}

// readPreamble reads and checks a connection's preamble.
func readPreamble(r io.Reader) (byte, error) {
	var pre [len(planeMagic) + 1]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return 0, fmt.Errorf("preamble: %w", err)
	}
	if string(pre[:len(planeMagic)]) != planeMagic {
		return 0, errors.New("preamble: not a Goblin node (or another version)")
	}
	if k := pre[len(planeMagic)]; k == kindRaft || k == kindRaftTo || k == kindInternal {
		return k, nil
	}
	return 0, fmt.Errorf("preamble: unknown connection kind %q", pre[len(planeMagic)])
}

// dial connects to a peer's plane for kind.
func (p *plane) dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	return p.dialTo(addr, "", kind, timeout)
}

// dialTo connects to a peer's plane for kind; for kindRaftTo, for Raft's
// traffic to node to only: the dial fails, wrapping errNotTarget, when
// another node answers at addr.
func (p *plane) dialTo(addr, to string, kind byte, timeout time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithTimeout(p.dials, min(timeout, maxDialTime))
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		tc.SetKeepAlive(true)
		tc.SetKeepAlivePeriod(5 * time.Second)
	}
	pc := p.track(c)
	if pc == nil {
		return nil, net.ErrClosed
	}
	pc.SetDeadline(deadline)
	if p.creds != nil {
		tc := tls.Client(pc.Conn, p.creds.ClientConfig())
		if err := tc.Handshake(); err != nil {
			pc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		pc.Conn = tc
	}
	pre := append([]byte(planeMagic), kind)
	if kind == kindRaftTo {
		pre = append(append(pre, byte(len(to))), to...)
	}
	if _, err := pc.Write(pre); err != nil {
		pc.Close()
		return nil, err
	}
	if kind == kindRaftTo {
		var answer [1]byte
		if _, err := io.ReadFull(pc, answer[:]); err != nil {
			pc.Close()
			return nil, fmt.Errorf("node-to-node preamble for node %q at %s: %w", to, addr, err)
		}
		if answer[0] != targetOK {
			pc.Close()
			return nil, fmt.Errorf("node %q at %s: %w", to, addr, errNotTarget)
		}
	}
	pc.SetDeadline(time.Time{})
	return pc, nil
}

// track registers a connection so close can close it; nil once closed.
func (p *plane) track(c net.Conn) *planeConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return nil
	}
	pc := &planeConn{Conn: c, raw: c, p: p}
	p.conns[pc] = struct{}{}
	return pc
}

// close stops the listener and closes every connection of the plane.
func (p *plane) close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.cancelDials()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	err := p.ln.Close()
	for pc := range conns {
		pc.raw.Close()
	}
	p.wg.Wait()
	return err
}

// planeConn is a connection of the plane; closing it forgets it. Conn is
// the TLS connection once the handshake is done (set before the
// connection is handed on), raw the TCP connection under it, which the
// plane closes when it closes.
type planeConn struct {
	net.Conn
	raw  net.Conn
	p    *plane
	once sync.Once
}

func (pc *planeConn) Close() error {
	pc.once.Do(func() {
		pc.p.mu.Lock()
		delete(pc.p.conns, pc)
		pc.p.mu.Unlock()
	})
	return pc.Conn.Close()
}

// raftStream is the plane's raft.StreamLayer.
type raftStream struct{ p *plane }

var _ raft.StreamLayer = raftStream{}

func (s raftStream) Accept() (net.Conn, error) {
	select {
	case c := <-s.p.raftConns:
		return c, nil
	case <-s.p.done:
		return nil, net.ErrClosed
	}
}

// Close closes the whole plane: Raft's transport is closed last, when the
// node shuts down.
func (s raftStream) Close() error { return s.p.close() }

func (s raftStream) Addr() net.Addr { return s.p.adv }

// Dial connects to addr for Raft; an address raftAddrs tagged with a
// server's ID (targetAddr) only to that server.
func (s raftStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	hostPort, to := splitTarget(string(addr))
	kind := kindRaft
	if to != "" {
		kind = kindRaftTo
	}
	dial := func() (*planeConn, error) {
		c, err := s.p.dialTo(hostPort, to, kind, timeout)
		if err != nil {
			return nil, err
		}
		return c.(*planeConn), nil
	}
	pc, err := dial()
	if err != nil {
		return nil, err
	}
	return &raftConn{planeConn: pc, dial: dial}, nil
}

// targetAddr tags a Raft address with the ID of the server Raft means to
// reach there, for raftStream.Dial: host:port#id (no host name or
// address holds a '#').
func targetAddr(addr, id string) string { return addr + "#" + id }

// splitTarget undoes targetAddr; to is "" for an address without a tag.
func splitTarget(addr string) (hostPort, to string) {
	hostPort, to, _ = strings.Cut(addr, "#")
	return hostPort, to
}
