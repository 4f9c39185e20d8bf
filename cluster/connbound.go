package cluster

import (
	"net"
	"sync"
)

// connBound bounds connections that anyone who reaches a port can hold
// before proving who they are: at most max in all and perHost from one
// remote host. The node-to-node plane bounds the connections waiting for
// their handshake with it, the gossip port the streams memberlist reads
// (gossipstreams.go). Past a bound a connection is closed at once, so a
// flood of idle connections cannot take the descriptors the node's
// clients, log and peers need, and one host cannot take the whole bound.
type connBound struct {
	max, perHost int

	mu     sync.Mutex
	n      int
	byHost map[string]int
}

func newConnBound(max, perHost int) *connBound {
	return &connBound{max: max, perHost: perHost, byHost: map[string]int{}}
}

// acquire counts a connection from host, unless a bound is reached.
func (b *connBound) acquire(host string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n >= b.max || b.byHost[host] >= b.perHost {
		return false
	}
	b.n++
	b.byHost[host]++
	return true
}

// release ends what acquire counted.
func (b *connBound) release(host string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.byHost[host]--; b.byHost[host] <= 0 {
		delete(b.byHost, host)
	}
}

// count is how many connections are counted.
func (b *connBound) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// remoteHost is the host part of a connection's remote address.
func remoteHost(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}
