package resp

import (
	"crypto/tls"
	"time"
)

// Client TLS.
//
// A TLS port is served like the TCP port: its connections pass through
// the same framedConn, redcon and client code, so framing, pipelining,
// AUTH and the limits on unauthenticated clients are the same. What
// differs is framedConn's first read (accept.go): it runs the handshake,
// in the connection's own goroutine and bounded by the handshake timeout,
// so a peer that connects and sends nothing, or sends plaintext, delays
// no one and is dropped. A TLS connection counts against maxclients from
// its accept, but its client is registered only once its handshake
// succeeded: CLIENT LIST and the client count never show half-open
// peers.
//
// The certificates are the tls.Config's business: a config that picks
// them per handshake (tlsconf.Reloader.ServerConfig) makes a reload
// apply to new connections while established ones keep going.

// defaultTLSHandshakeTimeout bounds a handshake when Config leaves it 0.
const defaultTLSHandshakeTimeout = 10 * time.Second

// closeNotifyWait is how long closing a TLS connection waits to send its
// close_notify alert to a peer that does not read, before it closes the
// socket anyway: closing never waits on a peer.
const closeNotifyWait = time.Second

// tlsConn is a server-side TLS connection whose Close does not wait on a
// peer that does not read (closeNotifyWait).
type tlsConn struct{ *tls.Conn }

func (c tlsConn) Close() error {
	t := time.AfterFunc(closeNotifyWait, func() { c.NetConn().Close() })
	err := c.Conn.Close()
	t.Stop()
	return err
}

// isTLS reports whether the client came through the TLS port.
func (c *client) isTLS() bool {
	_, ok := c.nc.(tlsConn)
	return ok
}

// selfAddr is the address this node gives clients for itself: its TLS
// port for a TLS client, else the TCP port; whichever exists.
func (s *Server) selfAddr(tlsClient bool) string {
	tcp, tls := s.Addr(), s.TLSAddr()
	if tls != nil && (tlsClient || tcp == nil) {
		return tls.String()
	}
	if tcp != nil {
		return tcp.String()
	}
	return ""
}
