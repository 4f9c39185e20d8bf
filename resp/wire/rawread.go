package wire

import "errors"

// Reading from the socket's descriptor.
//
// Go's network poller forgets what it learnt of a socket at the start of
// every net.Conn Read, so that Read always begins with a read system
// call: a connection waiting for its next request reads twice, once to
// find the socket empty and once, after the wake-up, for the request.
// Redis reads once, when epoll reports data. A connection served from
// inside its syscall.RawConn Read (the server's loop runs in the
// callback; BeginRaw hands the Framer the descriptor) keeps what the
// poller learnt between its reads, so once a read came back short of the
// buffer, the socket is known to have been emptied by it, and the next
// read can wait for the poller first: ReadBatch then returns
// ErrWouldBlock, the callback returns false, and RawConn's Read waits.
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

// BeginRaw makes the Framer read from the descriptor fd, a non-blocking
// socket, until EndRaw: inside syscall.RawConn's Read, whose callback is
// given fd. The first read after BeginRaw reads without waiting.
func (f *Framer) BeginRaw(fd int) {
	f.rawFD, f.drained = fd, false
}

// ResumeRaw is BeginRaw for a socket that has received nothing since the
// Framer last read from it in raw mode, without EndRaw since (an event
// loop waiting with epoll knows): what the Framer learnt of the socket is
// kept, so a read that came back short is not followed by another read.
func (f *Framer) ResumeRaw(fd int) {
	f.rawFD = fd
}

// EndRaw makes the Framer read from its net.Conn again.
func (f *Framer) EndRaw() {
	f.rawFD, f.drained, f.skipped = -1, false, false
}

// WaitedUnread reports whether the last ErrWouldBlock waits without a
// read since the last one came back short (so an end of stream may be
// pending unseen), rather than after a read that found nothing.
func (f *Framer) WaitedUnread() bool { return f.skipped }

// rawRead reads from the descriptor, or reports that the socket is to be
// waited for first (wait).
func (f *Framer) rawRead(p []byte) (n int, wait bool, err error) {
	f.skipped = f.drained
	if f.drained {
		f.drained = false
		return 0, true, nil
	}
	n, wait, err = readFD(f.rawFD, p)
	if err == nil && !wait {
		f.drained = n < len(p)
	}
	return n, wait, err
}
