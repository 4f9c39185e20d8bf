package wire

import "net"

// A socket under a TLS session, read from its descriptor.
//
// A TLS session reads the socket through net.Conn Read, so a connection
// waiting for its next request read twice, as a plaintext one did before
// raw mode (rawread.go): once to find the socket empty, once after the
// wake-up. RawSocket is the socket handed to the TLS session: between
// BeginRaw and EndRaw (inside the socket's syscall.RawConn Read, whose
// callback is given the descriptor) it reads the descriptor itself, and
// where a Framer in raw mode would wait for the socket it answers Read
// with an error that is temporary, as a net.Error, and Is ErrWouldBlock.
// crypto/tls keeps what it has read of a record and returns such an error
// to its caller without ending the session, so the Framer above it (fill)
// reports that the socket is to be waited for, the callback returns
// false, and RawConn's Read waits; the session's next Read goes on with
// the record where it stopped. Outside raw mode it reads through the
// net.Conn.
type RawSocket struct {
	net.Conn
	rawState
}

// NewRawSocket wraps the socket c, read through c until BeginRaw.
func NewRawSocket(c net.Conn) *RawSocket { return &RawSocket{Conn: c, rawState: rawState{fd: -1}} }

// NetConn returns the socket.
func (s *RawSocket) NetConn() net.Conn { return s.Conn }

// Read reads the socket; in raw mode it reports ErrWouldBlock where the
// socket is to be waited for.
func (s *RawSocket) Read(p []byte) (int, error) {
	if s.fd < 0 {
		return s.Conn.Read(p)
	}
	n, wait, err := s.readRaw(p)
	if wait {
		return 0, wouldBlock{}
	}
	return n, err
}

// wouldBlock is RawSocket's ErrWouldBlock: a temporary net.Error, which
// crypto/tls returns without ending the session.
type wouldBlock struct{}

func (wouldBlock) Error() string        { return ErrWouldBlock.Error() }
func (wouldBlock) Timeout() bool        { return false }
func (wouldBlock) Temporary() bool      { return true }
func (wouldBlock) Is(target error) bool { return target == ErrWouldBlock }
