package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/goblindb/goblin/resp/wire"
)

// A client connection, as redcon accepts it.
//
// Each of the server's listeners is handed to redcon wrapped in a
// framedListener, a plain adapter like tls.NewListener's: its Accept
// returns the accepted socket as a framedConn (for the TLS port, a server
// TLS session on it, whose handshake has not started). redcon's accept
// callback admits it (maxclients) and registers its client; redcon's
// goroutine for the connection then reads its first request through
// framedConn.Read, which
//
//   - runs the TLS handshake, bounded by the handshake timeout: a peer
//     that sends nothing, or plaintext, holds only its own goroutine, and
//     a TLS client is registered (CLIENT LIST) once its handshake is done;
//   - parses the first request with the connection's wire.Framer, whose
//     rules and error texts are Redis's: a protocol error is answered
//     here with Redis's text, and the connection ends;
//   - hands redcon that request's bytes as received (a slice of the
//     Framer's buffer) when redcon reads them as one request: every
//     client library's requests, and most inline ones. For framing only
//     Redis accepts (a quote inside an inline argument, other bytes than
//     "\r\n" after a bulk string), and for a request longer than
//     redcon's first read, redcon reads an empty request instead
//     (firstStandIn): it neither refuses what Redis accepts nor keeps a
//     second copy of a large request for the connection's life.
//
// redcon then calls Server.handle, which runs the Framer's parse of the
// first request, never redcon's (whose inline quoting differs from
// Redis's), detaches the connection and serves it from the Framer's
// batches until it ends.

// framedListener hands redcon a listener's connections as framedConns.
type framedListener struct {
	net.Listener
	tls              *tls.Config // nil: plaintext
	handshakeTimeout time.Duration
}

func (l framedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newFramedConn(c, l.tls, l.handshakeTimeout), nil
}

// framedConn is a client's connection and its request framer.
type framedConn struct {
	net.Conn // the socket, or the TLS session on it (tlsConn)
	raw      net.Conn
	fr       *wire.Framer
	tls      *tls.Conn // nil: plaintext
	// sock is the socket under the TLS session (nil: plaintext), which
	// reads the descriptor while the session is served in raw mode.
	sock    *wire.RawSocket
	timeout time.Duration

	// ready is called in the connection's goroutine once it can be served
	// (for TLS, once its handshake succeeded), before its first request
	// is read; nil: nothing to do.
	ready func()
	// onClose is called once, by the first Close (maxclients' count).
	onClose   func()
	closeOnce sync.Once

	// loopWake, while the event loop serves the connection, has the loop
	// look at it: it was killed or closed (evloop_linux.go).
	loopWake atomic.Pointer[func()]

	started bool
	first   [][]byte // the first request's arguments, as the Framer parsed them
	pass    []byte   // what redcon has still to read of the first request
}

// firstStandIn is what redcon reads in place of a first request it would
// parse otherwise than Redis, or whose size would grow its buffers: an
// empty request, which Server.handle does not run (it runs the Framer's).
var firstStandIn = []byte("*1\r\n$0\r\n\r\n")

// redconFirstRead is the size of redcon's first read from a connection:
// a first request that fits is read into the buffer redcon has anyway.
const redconFirstRead = 4096

func newFramedConn(c net.Conn, cfg *tls.Config, handshakeTimeout time.Duration) *framedConn {
	fc := &framedConn{Conn: c, raw: c}
	if cfg != nil {
		fc.sock = wire.NewRawSocket(c)
		fc.tls = tls.Server(fc.sock, cfg)
		fc.Conn = tlsConn{fc.tls}
		fc.timeout = handshakeTimeout
		if fc.timeout <= 0 {
			fc.timeout = defaultTLSHandshakeTimeout
		}
	}
	fc.fr = wire.NewFramer(fc.Conn)
	return fc
}

// Read hands redcon the connection's first request (see above). redcon
// reads nothing more: handle detaches the connection.
func (f *framedConn) Read(p []byte) (int, error) {
	if !f.started {
		f.started = true
		if err := f.start(); err != nil {
			return 0, err
		}
	}
	if len(f.pass) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.pass)
	f.pass = f.pass[n:]
	return n, nil
}

// start completes a TLS handshake, then reads the first request.
func (f *framedConn) start() error {
	if f.tls != nil {
		ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
		err := f.tls.HandshakeContext(ctx)
		cancel()
		if err != nil {
			return err
		}
	}
	if f.ready != nil {
		f.ready()
	}
	argv, raw, err := f.fr.ReadFirst()
	if err != nil {
		f.writeProtocolError(err)
		return err
	}
	f.first, f.pass = argv, raw
	if len(raw) > redconFirstRead {
		f.pass = firstStandIn
	} else if _, err := redcon.Parse(raw); err != nil {
		f.pass = firstStandIn
	}
	return nil
}

// Write is redcon's: it flushes its empty reply buffer when it closes a
// connection the accept callback refused, which for TLS would run the
// handshake on the accept loop. An empty write writes nothing.
func (f *framedConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return f.Conn.Write(p)
}

// writeProtocolError answers a protocol error with Redis's text; other
// errors end the connection without a word.
func (f *framedConn) writeProtocolError(err error) {
	var pe *wire.ProtocolError
	if errors.As(err, &pe) {
		f.Conn.Write(pe.Reply())
	}
}

// Close closes the connection; the first Close calls onClose.
func (f *framedConn) Close() error {
	f.closeOnce.Do(func() {
		if f.onClose != nil {
			f.onClose()
		}
	})
	err := f.Conn.Close()
	f.wakeLoop()
	return err
}

// wakeLoop has the event loop look at the connection, if it serves it.
func (f *framedConn) wakeLoop() {
	if wake := f.loopWake.Load(); wake != nil {
		(*wake)()
	}
}

var (
	_ net.Listener = framedListener{}
	_ net.Conn     = (*framedConn)(nil)
)
