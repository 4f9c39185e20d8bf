package resp

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/resp/wire"
)

// A connection's loop: run the batch of requests that arrived together,
// write its replies, read the next batch. The Framer parses the requests
// once, in place, and the replies of each batch leave in one write.
//
// A connection is served from inside its socket's syscall.RawConn Read
// (serveRaw), so that a request costs one read system call, as in Redis,
// instead of two (resp/wire/rawread.go tells why): the Framer reads a
// plaintext socket's descriptor, and a TLS session reads it through a
// wire.RawSocket (resp/wire/rawsock.go). Two cases need more:
//
//   - a batch holding a command that can wait for data (a blocking pop,
//     WAIT, WAITAOF) runs outside, as its wait reads the socket from another
//     goroutine (Framer.WatchClose) and RawConn's Read holds the socket's
//     read lock;
//   - a wait that skipped a read, which cannot see an end of stream that
//     came with the last request, lasts unreadBound at most (a read
//     deadline, set once and kept until it passes), and is then followed
//     by a read: a client that sends its last request and closes is seen
//     gone within that bound.
//
// A batch counts as in flight (Close waits for it) from its start until
// its replies are written, which is when the Framer next reads.
type connLoop struct {
	s        *Server
	c        *client
	fc       *framedConn
	cmds     [][][]byte
	have     bool // cmds are still to run
	inFlight bool
	flushFn  func() error // flush, made once
}

// unreadBound bounds a wait for the socket that skipped a read.
const unreadBound = 100 * time.Millisecond

func newConnLoop(s *Server, c *client, fc *framedConn) *connLoop {
	l := &connLoop{s: s, c: c, fc: fc, cmds: [][][]byte{fc.first}, have: true}
	fc.first = nil
	l.flushFn = l.flush
	return l
}

// flush writes the replies waiting, which ends the batch in flight.
func (l *connLoop) flush() error {
	err := l.c.flushOut()
	l.landed()
	return err
}

// landed ends the batch in flight: its replies are written.
func (l *connLoop) landed() {
	if l.inFlight {
		l.inFlight = false
		l.s.active.Add(-1)
	}
}

// run serves batches until the connection ends (true); in raw mode also
// until the socket must be waited for, or a batch must run outside
// (false, the batch kept in l.cmds).
func (l *connLoop) run(raw bool) (end bool) {
	for {
		if l.have {
			if raw && mayWaitForData(l.cmds) {
				return false
			}
			if l.runBatch() {
				return true
			}
		}
		cmds, err := l.fc.fr.ReadBatch(l.flushFn)
		if err == wire.ErrWouldBlock {
			return false
		}
		if err != nil {
			l.flush()
			l.fc.writeProtocolError(err)
			return true
		}
		used, free := l.fc.fr.BufStats()
		l.c.qbuf.Store(int64(used))
		l.c.qbufFree.Store(int64(free))
		l.cmds, l.have = cmds, true
	}
}

// runBatch runs l.cmds; true: the connection ends.
func (l *connLoop) runBatch() (end bool) {
	if !l.begin() {
		return true
	}
	l.c.runBatch(l.cmds)
	return l.c.quit || l.c.isKilled()
}

// begin starts running l.cmds, counted in flight; false: the server is
// closing. A closing server runs nothing new: the connection closes and
// the client goes to another node, instead of waiting on one that is
// leaving.
func (l *connLoop) begin() bool {
	l.have = false
	select {
	case <-l.s.closing:
		return false
	default:
	}
	if !l.inFlight {
		l.inFlight = true
		l.s.active.Add(1)
	}
	return true
}

// rawReader is what reads a connection's socket in raw mode: the Framer
// (plaintext), or the wire.RawSocket under a TLS session.
type rawReader interface {
	BeginRaw(fd int)
	EndRaw()
	WaitedUnread() bool
}

// serveRaw serves the connection from inside rc's Read until it ends.
func (l *connLoop) serveRaw(rc syscall.RawConn) {
	var fr rawReader = l.fc.fr
	if l.fc.sock != nil {
		fr = l.fc.sock
	}
	armed := false // the read deadline bounding a wait is set
	setDeadline := func(t time.Time) (killed bool) {
		l.fc.raw.SetReadDeadline(t)
		// CLIENT KILL sets the deadline too, after marking the client:
		// once it is seen unmarked here, its deadline comes after this one.
		return l.c.isKilled()
	}
	end := false
	serve := func(fd uintptr) bool {
		fr.BeginRaw(int(fd))
		if end = l.run(true); end || l.have {
			return true
		}
		if fr.WaitedUnread() && !armed {
			armed = true
			if end = setDeadline(time.Now().Add(unreadBound)); end {
				return true
			}
		}
		return false
	}
	for {
		err := rc.Read(serve)
		fr.EndRaw()
		if end {
			return
		}
		bounded := armed
		if armed {
			// The bound passed (a read follows now), or a batch runs
			// outside, where a deadline would end its reads.
			armed = false
			if setDeadline(time.Time{}) {
				return
			}
		}
		switch {
		case bounded && errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case err != nil:
			return // closed, or CLIENT KILL's deadline
		}
		if l.runBatch() {
			return
		}
	}
}

// mayWaitForData reports whether a batch holds a command that can wait
// for data: a blocking pop, WAIT or WAITAOF (queued in a transaction they do not
// wait, but are counted all the same).
func mayWaitForData(cmds [][][]byte) bool {
	for _, argv := range cmds {
		if len(argv) == 0 || len(argv[0]) == 0 {
			continue
		}
		if c := argv[0][0] | 0x20; c != 'b' && c != 'w' {
			continue
		}
		if spec := command.Find(argv[0]); spec != nil && (spec.Flags&command.Blocking != 0 || spec.Name == "wait" || spec.Name == "waitaof") {
			return true
		}
	}
	return false
}

// rawConn returns the socket to serve from inside its RawConn Read: a
// TCP or Unix socket, plaintext or under TLS, on a system where
// descriptors can be read; nil otherwise.
func (f *framedConn) rawConn() syscall.RawConn {
	if !wire.RawReads {
		return nil
	}
	sc, ok := f.raw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
