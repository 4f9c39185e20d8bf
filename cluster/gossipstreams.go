package cluster

import (
	"fmt"
	"log"
	"net"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// Gossip streams (memberlist's TCP side: state exchanges, reliable
// messages, pings when UDP fails) are read by memberlist for up to its
// TCPTimeout (10 s) before it gives up on one that sends nothing, and it
// accepts as many as arrive. Anyone who reaches the gossip port can open
// them, credentials or not, so the streams memberlist holds are bounded
// as the plane's connections waiting for their handshake are (connBound):
// past the bounds a stream is closed as soon as it is accepted. Nodes open
// a few streams a minute each, one or two at a time.
const (
	maxGossipStreams        = 256
	maxGossipStreamsPerHost = 64
)

// boundedTransport is memberlist's own network transport with its
// accepted streams bounded.
type boundedTransport struct {
	*memberlist.NetTransport
	streams chan net.Conn
	bound   *connBound
	log     hclog.Logger
	done    chan struct{}
	wg      sync.WaitGroup
}

// newBoundedTransport listens for gossip on host:port (TCP and UDP). Port
// 0 picks a port free for both.
func newBoundedTransport(host string, port int, log hclog.Logger, logger *log.Logger) (*boundedTransport, error) {
	var nt *memberlist.NetTransport
	var err error
	for range 10 {
		nt, err = memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{host}, BindPort: port, Logger: logger})
		if err == nil || port != 0 {
			break // a chosen port is not tried again; port 0 may have met a taken UDP port
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	t := &boundedTransport{NetTransport: nt, streams: make(chan net.Conn), log: log, done: make(chan struct{}),
		bound: newConnBound(maxGossipStreams, maxGossipStreamsPerHost)}
	t.wg.Add(1)
	go t.admit()
	return t, nil
}

// StreamCh is where memberlist takes the streams it reads.
func (t *boundedTransport) StreamCh() <-chan net.Conn { return t.streams }

// admit passes accepted streams on while within the bounds.
func (t *boundedTransport) admit() {
	defer t.wg.Done()
	for {
		var c net.Conn
		select {
		case c = <-t.NetTransport.StreamCh():
		case <-t.done:
			return
		}
		host := remoteHost(c)
		if !t.bound.acquire(host) {
			t.log.Warn("gossip stream refused: too many streams open",
				"remote", c.RemoteAddr(), "limit", maxGossipStreams, "per-host", maxGossipStreamsPerHost)
			c.Close()
			continue
		}
		bc := &boundedConn{Conn: c, release: func() { t.bound.release(host) }}
		select {
		case t.streams <- bc:
		case <-t.done:
			bc.Close()
			return
		}
	}
}

// Shutdown stops the listeners.
func (t *boundedTransport) Shutdown() error {
	err := t.NetTransport.Shutdown()
	close(t.done)
	t.wg.Wait()
	return err
}

// boundedConn releases its place in the bound when closed (memberlist
// closes every stream it handles).
type boundedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *boundedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
