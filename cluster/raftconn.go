package cluster

import (
	"net"
	"time"
)

// raftConn is a connection Raft's transport dialed to a peer. The
// transport keeps such connections in a pool between requests; a peer
// that stopped or restarted meanwhile has closed its end, and the next
// request on it failed (the leader logged "failed to appendEntries ...
// EOF" at every restart of a follower, and backed off before sending
// again). So before a request starts, a connection the peer has closed is
// replaced by a new one to the same address, dialed as the first was.
//
// A request starts with the first write after a read (the answer to the
// previous one) and the transport sends one request at a time on a
// connection, so nothing of a request is ever split across two
// connections. The peer sends nothing between answers: bytes waiting
// there mean the connection is done as well (a TLS close alert).
type raftConn struct {
	*planeConn
	dial func() (*planeConn, error)
	// answered: the last call was a Read.
	answered bool
	// The deadlines the transport set, set again on a replacement.
	read, write time.Time
}

func (c *raftConn) Write(b []byte) (int, error) {
	if c.answered {
		c.answered = false
		if peerClosed(c.raw) {
			if err := c.redial(); err != nil {
				return 0, err
			}
		}
	}
	return c.planeConn.Write(b)
}

func (c *raftConn) Read(b []byte) (int, error) {
	c.answered = true
	return c.planeConn.Read(b)
}

func (c *raftConn) redial() error {
	nc, err := c.dial()
	if err != nil {
		return err
	}
	c.planeConn.Close()
	c.planeConn = nc
	nc.SetReadDeadline(c.read)
	nc.SetWriteDeadline(c.write)
	return nil
}

func (c *raftConn) SetDeadline(t time.Time) error {
	c.read, c.write = t, t
	return c.planeConn.SetDeadline(t)
}

func (c *raftConn) SetReadDeadline(t time.Time) error {
	c.read = t
	return c.planeConn.SetReadDeadline(t)
}

func (c *raftConn) SetWriteDeadline(t time.Time) error {
	c.write = t
	return c.planeConn.SetWriteDeadline(t)
}

var _ net.Conn = (*raftConn)(nil)
