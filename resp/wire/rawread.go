package wire

import (
	"errors"
	"sync/atomic"
)

// Reading from the socket's descriptor.
//
// Go's network poller forgets what it learnt of a socket at the start of
// every net.Conn Read, so that Read always begins with a read system
// call: a connection waiting for its next request reads twice, once to
// find the socket empty and once, after the wake-up, for the request.
// Redis reads once, when epoll reports data. A connection served from
// inside its syscall.RawConn Read (the server's loop runs in the
// callback; BeginRaw hands the reader the descriptor) keeps what the
// poller learnt between its reads, so once a read came back short of the
// buffer, the socket was emptied by it, and the next read can wait for the
// poller first: ReadBatch then returns ErrWouldBlock, the callback
// returns false, and RawConn's Read waits. The Framer reads a plaintext
// socket so, and a RawSocket the socket under a TLS session
// (rawsock.go).
//
// Whether to wait first or read first after a short read is a guess
// (readGuess, rawguess.go): a client that shares a CPU with the server
// has often sent its next request by then, and a read finds it without a
// wait. Only a server's one client connection guesses: reading first
// keeps the others waiting.
//
// What such a wait cannot see is an end of stream that arrived together
// with the last request: the poller reported both at once, and the short
// read took the request and left the end unread. WaitedUnread tells the
// caller that the wait skipped a read, so that it bounds the wait (a read
// deadline) and reads once more when it passes.

// ErrWouldBlock is ReadBatch's answer, in raw mode, when no complete
// request is buffered and the socket is to be waited for before the next
// read.
var ErrWouldBlock = errors.New("wait for the socket to be readable")

// rawState is the state of reading a socket's descriptor in raw mode.
type rawState struct {
	// fd is the descriptor read from, -1 outside raw mode.
	fd int
	// drained: the last read came back short; sure: and the socket has
	// received nothing since (ResumeRaw); skipped: the last wait for the
	// socket came without a read.
	drained, sure, skipped bool
	guess                  readGuess
	// Clients counts the server's open client connections: a connection
	// reads first after a short read (readGuess) only while it is the
	// only one (nil: always may).
	Clients *atomic.Int64
}

// readFirst reports whether to read before waiting, after a short read.
func (r *rawState) readFirst() bool {
	if r.Clients != nil && r.Clients.Load() > 1 {
		return false
	}
	return r.guess.readFirst()
}

// BeginRaw reads the descriptor fd, a non-blocking socket, until EndRaw:
// inside syscall.RawConn's Read, whose callback is given fd. The first
// read after BeginRaw reads without waiting.
func (r *rawState) BeginRaw(fd int) {
	r.fd, r.drained, r.sure = fd, false, false
}

// ResumeRaw is BeginRaw for a socket that has received nothing since it
// was last read in raw mode, without EndRaw since (an event loop waiting
// with epoll knows): a read that came back short is not followed by
// another read.
func (r *rawState) ResumeRaw(fd int) {
	r.fd, r.sure = fd, true
}

// EndRaw ends raw mode.
func (r *rawState) EndRaw() {
	r.fd, r.drained, r.sure, r.skipped = -1, false, false, false
}

// WaitedUnread reports whether the last ErrWouldBlock waits without a
// read since the last one came back short (so an end of stream may be
// pending unseen), rather than after a read that found nothing.
func (r *rawState) WaitedUnread() bool { return r.skipped }

// readRaw reads from the descriptor, or reports that the socket is to be
// waited for first (wait).
func (r *rawState) readRaw(p []byte) (n int, wait bool, err error) {
	guessed := r.drained
	if r.drained {
		r.drained = false
		if r.sure || !r.readFirst() {
			r.skipped = true
			return 0, true, nil
		}
	}
	r.skipped, r.sure = false, false
	n, wait, err = readFD(r.fd, p)
	if guessed {
		r.guess.found(!wait)
	}
	if err == nil && !wait {
		r.drained = n < len(p)
	}
	return n, wait, err
}
