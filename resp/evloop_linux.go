//go:build linux

package resp

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goblindb/goblin/internal/yield"
	"github.com/goblindb/goblin/resp/wire"
)

// The event loop serves plaintext connections from one goroutine, the way
// Redis's event loop does, for as long as their batches are plain writes
// (a pipeline of ZADDs, say), on a node that leads.
//
// A connection served by its own goroutine costs two goroutine wake-ups
// per write: one when its request arrives, one when its write is
// applied. The loop instead waits on an epoll set of its own, which Go's
// poller waits on like any socket, reads every ready connection's
// requests in one wake-up and proposes their writes as one batch. Each
// connection's own goroutine, parked meanwhile, waits for its writes and
// posts the connection back; the loop then writes the replies. No
// connection waits behind another's writes: one whose write cannot be
// stored (a full disk) or whose outcome is learned late (a leadership
// change) holds back no other.
//
// The connection's goroutine waits parked while the loop serves its
// connection. A batch the loop cannot run without waiting (loopable: a
// read the writes in flight hold back, a write on a follower, which
// forwards it, a transaction, a command refused after a write...) is lent
// to it: it runs the batch, writes the replies and gives the connection
// back. It keeps the connection for good when the batch may wait for data
// (a blocking pop, WAIT), when the connection is no longer plain (inside
// MULTI, a MONITOR), or when the socket did not take a reply at once.
// Nothing in the loop waits.
//
// Linearizable reads that need a read barrier (on a follower, the
// leader's read index) stay in the loop too: their connections wait,
// unread, for one barrier the loop takes for all of them, on a goroutine
// of its own, and run their reads when it has passed. The reads that
// arrive while it is under way share the next, as the connections'
// goroutines would share the node's rounds, without waking one of them.
//
// A connection's descriptor is in the epoll set, keyed by its number;
// every read and write goes through the net.Conn's RawConn, which keeps
// the descriptor open meanwhile. A connection closed by another goroutine
// (redcon's, at a listener's end) leaves the set as its descriptor is
// closed, and tells the loop (framedConn.Close); should its number be
// reused before the loop hears of it, the new connection's arrival ends
// the old one.
type evLoop struct {
	s    *Server
	ep   *os.File // the epoll set, waited on by Go's poller
	epfd int      // its descriptor (os.File.Fd would make it blocking)
	erc  syscall.RawConn
	efd  int // eventfd in the set: something was posted

	// batches counts the batches run in the loop, handOffs the
	// connections handed back to their goroutines for good, lent the
	// batches their goroutines ran for the loop.
	batches, handOffs, lent atomic.Int64
	// yields counts the turns that ended with requests left (loopTurn).
	yields atomic.Int64

	// notify wakes the loop while it waits for writes in flight (not for
	// its sockets); the eventfd wakes it otherwise.
	notify chan struct{}

	mu     sync.Mutex
	posted []loopMsg
	// dead: the loop has stopped; what is posted is answered at once.
	dead bool

	// The loop goroutine's own. stop: the server closes; inFlight counts
	// the connections whose goroutines wait for their writes.
	stop     bool
	inFlight int
	// again holds the connections that had their turn (loopTurn) with
	// requests left: the next round serves them first.
	again    []*loopConn
	turn     int // loopTurn
	timer    *time.Timer
	together func(func())
	// The connections whose reads wait for a read barrier: barrierNext
	// for the next one, barrierOn for the one under way (barrierBusy).
	barrierNext, barrierOn []*loopConn
	barrierBusy            bool
	conns                  map[int32]*loopConn
	events                 []syscall.EpollEvent
	ended                  bool
}

// loopConn is a connection the loop serves.
type loopConn struct {
	l  *connLoop
	rc syscall.RawConn
	fd int
	// back tells the connection's goroutine the loop let it go, and why.
	back chan loopVerdict
	// pending: its goroutine waits for its writes; fresh: epoll reported data
	// or an end since its socket was last read; hup: the peer closed (or
	// the socket failed); barrier: its batch waits for a read barrier;
	// covered: one taken after the batch arrived has passed.
	pending, fresh, hup, barrier, covered bool
}

// loopVerdict is why the loop lets a connection go.
type loopVerdict uint8

const (
	verdictEnd   loopVerdict = iota // the connection ended
	verdictYours                    // its goroutine serves it from now on
	verdictOne                      // its goroutine runs the batch read, then gives it back
	verdictWait                     // its goroutine waits for the batch's writes, then gives it back
)

type loopMsgKind uint8

const (
	msgAdd     loopMsgKind = iota // a new connection
	msgDone                       // lc's writes are answered
	msgKill                       // killed (CLIENT KILL, a deleted user) or closed
	msgStop                       // the server closes
	msgBarrier                    // the read barrier under way passed, or failed (err)
)

type loopMsg struct {
	lc   *loopConn
	kind loopMsgKind
	err  error
}

// loopTurn bounds the batches a connection runs in a row while others
// wait: one sending reads without pause does not hold the loop (a
// variable for tests).
var loopTurn = 16

// flightWait bounds how long the loop leaves its sockets unread while
// writes are in flight.
const flightWait = 2 * time.Millisecond

// eventfd flags (EFD_NONBLOCK, EFD_CLOEXEC).
const efdFlags = syscall.O_NONBLOCK | syscall.O_CLOEXEC

// newEvLoop starts an event loop for s.
func newEvLoop(s *Server) (*evLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	r, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, efdFlags, 0)
	if errno != 0 {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("eventfd2", errno)
	}
	efd := int(r)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | -syscall.EPOLLET, Fd: int32(efd)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, efd, &ev); err != nil {
		syscall.Close(efd)
		syscall.Close(epfd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(efd)
		syscall.Close(epfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	e := &evLoop{s: s, ep: os.NewFile(uintptr(epfd), "epoll"), epfd: epfd, efd: efd,
		conns: map[int32]*loopConn{}, events: make([]syscall.EpollEvent, 256),
		notify: make(chan struct{}, 1), together: func(fn func()) { fn() }, timer: time.NewTimer(flightWait), turn: loopTurn}
	e.timer.Stop()
	if p, ok := s.backend.(proposer); ok {
		e.together = p.ProposeTogether
	}
	e.erc, err = e.ep.SyscallConn()
	if err != nil {
		e.ep.Close()
		syscall.Close(efd)
		return nil, err
	}
	go e.run()
	return e, nil
}

// serve has the loop serve l's connection; it returns once the loop lets
// it go: true if it ended, false if the caller serves it now. l holds the
// connection's first batch.
func (e *evLoop) serve(l *connLoop, rc syscall.RawConn) (ended bool) {
	fd := -1
	if err := rc.Control(func(d uintptr) { fd = int(d) }); err != nil || fd < 0 {
		return false
	}
	lc := &loopConn{l: l, rc: rc, fd: fd, back: make(chan loopVerdict, 1), fresh: true}
	wake := func() { e.post(loopMsg{lc: lc, kind: msgKill}) }
	l.fc.loopWake.Store(&wake)
	defer l.fc.loopWake.Store(nil)
	add := true
	for {
		if add {
			e.post(loopMsg{lc: lc, kind: msgAdd})
		}
		add = true
		switch <-lc.back {
		case verdictEnd:
			return true
		case verdictYours:
			return false
		case verdictWait:
			// The loop still holds the connection's place in its set:
			// it writes the replies once told.
			l.c.endBatch()
			e.post(loopMsg{lc: lc, kind: msgDone})
			add = false
			continue
		}
		// A batch the loop could not run without waiting: run here, and
		// go back to the loop unless the connection changed (MULTI).
		end := l.runBatch()
		keep := !end && !plainClient(l.c)
		if keep {
			e.handOffs.Add(1)
		}
		if end || l.flush() != nil {
			return true
		}
		if keep {
			return false
		}
		lc.fresh, lc.hup = true, false
	}
}

// loopCounts returns the loop's batches and hand-offs (none without a
// loop).
func (s *Server) loopCounts() (batches, handOffs int64) {
	if s.loop == nil {
		return 0, 0
	}
	return s.loop.batches.Load(), s.loop.handOffs.Load()
}

// close ends every connection the loop serves, as they finish their
// writes, and then the loop.
func (e *evLoop) close() { e.post(loopMsg{kind: msgStop}) }

// post hands the loop a message and wakes it.
func (e *evLoop) post(m loopMsg) {
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		orphan(m)
		return
	}
	first := len(e.posted) == 0
	e.posted = append(e.posted, m)
	e.mu.Unlock()
	if first {
		select {
		case e.notify <- struct{}{}:
		default:
		}
		one := [8]byte{1}
		syscall.Write(e.efd, one[:])
	}
}

// run is the loop. With writes in flight it waits for them to be
// answered, as Redis's clients wait for its fsync: requests that arrive
// meanwhile are read in the next round, together. With none, it waits
// for its epoll set to report something. Each round serves every socket
// that has data, proposing the writes of all as one batch, then answers
// what was posted (writes applied, new connections, kills).
func (e *evLoop) run() {
	for !e.ended {
		if e.inFlight > 0 {
			// Not for long: a read must not wait long for writes that
			// are slow to commit (a disk stall, an election).
			e.timer.Reset(flightWait)
			select {
			case <-e.notify:
				e.gather()
			case <-e.timer.C:
			}
			e.timer.Stop()
			e.round(e.epfd)
			continue
		}
		err := e.erc.Read(func(fd uintptr) bool {
			return e.round(int(fd)) > 0 || e.ended
		})
		if err != nil {
			break
		}
	}
	// Whatever the loop still serves (only if it failed) goes back to its
	// goroutine, as what is posted from now on.
	for _, lc := range e.conns {
		if !lc.pending {
			e.let(lc, verdictYours)
		}
	}
	e.mu.Lock()
	e.dead = true
	msgs := e.posted
	e.posted = nil
	e.mu.Unlock()
	for _, m := range msgs {
		orphan(m)
	}
	e.ep.Close()
	syscall.Close(e.efd)
}

// gather lets the connections' goroutines that can run post too before
// the loop takes what was posted: a batch applied makes runnable every
// goroutine that waits for one of its writes, and the loop, woken by the
// first, would otherwise serve that connection alone and propose its next
// write alone. It yields until every connection in flight posted, or two
// yields in a row found nothing more.
func (e *evLoop) gather() {
	if e.inFlight > 0 {
		yield.WhileGrowing(e.postedLen, e.inFlight, 0)
	}
}

func (e *evLoop) postedLen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.posted)
}

// round serves what the epoll set epfd reports and what was posted, and
// returns how many things it served. Whatever it proposes goes to the log
// as one batch.
func (e *evLoop) round(epfd int) (served int) {
	// The sockets first, then the connections whose writes were answered
	// (their replies written, their next requests read).
	e.together(func() {
		if again := e.again; len(again) > 0 {
			e.again = nil
			served += len(again)
			for _, lc := range again {
				if e.conns[int32(lc.fd)] == lc {
					e.serveConn(lc)
				}
			}
		}
		for !e.ended {
			n, err := syscall.EpollWait(epfd, e.events, 0)
			if err == syscall.EINTR {
				continue
			}
			if n <= 0 {
				break
			}
			served += n
			for _, ev := range e.events[:n] {
				if ev.Fd == int32(e.efd) {
					continue // taken below
				}
				lc := e.conns[ev.Fd]
				if lc == nil {
					continue
				}
				lc.fresh = true
				if ev.Events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
					lc.hup = true
				}
				e.serveConn(lc)
			}
			if n < len(e.events) {
				break
			}
		}
		served += e.takePosted()
	})
	e.startBarrier()
	return served
}

// startBarrier takes a read barrier for the connections waiting for the
// next one, unless one is under way: on a goroutine of its own, which
// posts the outcome.
func (e *evLoop) startBarrier() {
	if e.barrierBusy || len(e.barrierNext) == 0 || e.stop {
		return
	}
	e.barrierBusy = true
	e.barrierOn, e.barrierNext = e.barrierNext, e.barrierOn[:0]
	go func() {
		err := e.s.backend.ReadBarrier(context.Background(), false)
		e.post(loopMsg{kind: msgBarrier, err: err})
	}()
}

// barrierPassed runs the reads that waited for the barrier that ended,
// or, if it failed, lends them to their goroutines, which take their own
// (and reply with its error if that fails too).
func (e *evLoop) barrierPassed(err error) {
	e.barrierBusy = false
	on := e.barrierOn
	for i, lc := range on {
		on[i] = nil
		lc.barrier = false
		if e.conns[int32(lc.fd)] != lc {
			continue // ended meanwhile
		}
		if err != nil {
			e.lend(lc)
			continue
		}
		lc.covered = true
		e.serveConn(lc)
	}
	e.barrierOn = on[:0]
}

// closed reports whether rc's descriptor is closed.
func closed(rc syscall.RawConn) bool {
	return rc.Control(func(uintptr) {}) != nil
}

// orphan answers a message the loop will never read: a connection goes
// back to its goroutine.
func orphan(m loopMsg) {
	switch m.kind {
	case msgAdd:
		m.lc.back <- verdictYours
	case msgDone:
		m.lc.back <- verdictYours
	}
}

// takePosted serves the messages posted since the last call, and
// returns how many there were.
func (e *evLoop) takePosted() int {
	e.mu.Lock()
	msgs := e.posted
	e.posted = nil
	e.mu.Unlock()
	if len(msgs) == 0 {
		return 0
	}
	var buf [8]byte
	syscall.Read(e.efd, buf[:])
	for _, m := range msgs {
		lc := m.lc
		switch m.kind {
		case msgAdd:
			if e.stop {
				e.let(lc, verdictEnd)
				continue
			}
			if old := e.conns[int32(lc.fd)]; old != nil {
				// One of the two was closed, and its number reused: the
				// one whose descriptor is closed ends.
				if !closed(lc.rc) && closed(old.rc) {
					delete(e.conns, int32(lc.fd))
					if !old.pending {
						old.back <- verdictEnd
					}
				} else {
					lc.back <- verdictEnd
					continue
				}
			}
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | -syscall.EPOLLET, Fd: int32(lc.fd)}
			if err := syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_ADD, lc.fd, &ev); err != nil {
				lc.back <- verdictYours
				continue
			}
			e.conns[int32(lc.fd)] = lc
			e.serveConn(lc)
		case msgDone:
			lc.pending = false
			e.inFlight--
			if e.conns[int32(lc.fd)] != lc {
				lc.back <- verdictEnd // closed meanwhile (above)
				continue
			}
			if e.stop {
				lc.l.flush()
				e.let(lc, verdictEnd)
				continue
			}
			e.serveConn(lc)
		case msgKill:
			if e.conns[int32(lc.fd)] == lc && !lc.pending {
				e.let(lc, verdictEnd)
			}
		case msgBarrier:
			e.barrierPassed(m.err)
		case msgStop:
			e.stop = true
			for _, lc := range e.conns {
				if !lc.pending {
					e.let(lc, verdictEnd)
				}
			}
		}
	}
	if e.stop && len(e.conns) == 0 {
		e.ended = true
	}
	return len(msgs)
}

// lend has lc's goroutine run the batch the loop holds for it, then
// give the connection back.
func (e *evLoop) lend(lc *loopConn) {
	lc.l.fc.fr.EndRaw()
	e.lent.Add(1)
	e.let(lc, verdictOne)
}

// let lets lc go, for the reason v.
func (e *evLoop) let(lc *loopConn, v loopVerdict) {
	if e.conns[int32(lc.fd)] == lc {
		syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_DEL, lc.fd, nil)
		delete(e.conns, int32(lc.fd))
	}
	lc.back <- v
}

// The outcomes of serving a connection.
type loopOutcome uint8

const (
	loopIdle    loopOutcome = iota // it waits for data
	loopPending                    // its goroutine waits for its writes
	loopBarrier                    // its reads wait for a read barrier
	loopHandOff                    // its goroutine serves it from now on
	loopLend                       // its goroutine runs its batch
	loopYield                      // it had its turn, with requests left
	loopEnd                        // it ended
)

// serveConn runs lc's batches until it has to wait for its socket or
// for its writes, or leaves the loop.
func (e *evLoop) serveConn(lc *loopConn) {
	if lc.pending || lc.barrier {
		return
	}
	out := loopEnd
	err := lc.rc.Read(func(fd uintptr) bool {
		out = e.runConn(lc, int(fd))
		return true
	})
	if err != nil {
		out = loopEnd
	}
	switch out {
	case loopPending:
		lc.pending = true
		e.inFlight++
		lc.back <- verdictWait
	case loopBarrier:
		lc.barrier = true
		e.barrierNext = append(e.barrierNext, lc)
	case loopHandOff:
		lc.l.fc.fr.EndRaw()
		e.handOffs.Add(1)
		e.let(lc, verdictYours)
	case loopLend:
		e.lend(lc)
	case loopYield:
		// Its socket may hold more, which epoll will not report again.
		lc.fresh = true
		e.yields.Add(1)
		e.again = append(e.again, lc)
	case loopEnd:
		lc.l.fc.fr.EndRaw()
		e.let(lc, verdictEnd)
	}
}

// runConn is serveConn inside the connection's RawConn Read: fd is its
// socket.
func (e *evLoop) runConn(lc *loopConn, fd int) loopOutcome {
	l, c := lc.l, lc.l.c
	fr := l.fc.fr
	if lc.fresh {
		fr.BeginRaw(fd)
		lc.fresh = false
	} else {
		fr.ResumeRaw(fd)
	}
	if !e.flush(lc, fd) {
		return loopHandOff
	}
	if c.quit || c.isKilled() || c.outClosed {
		return loopEnd
	}
	for turn := 0; ; turn++ {
		if turn == e.turn {
			return loopYield
		}
		if !l.have {
			cmds, err := fr.ReadBatch(nil)
			if err == wire.ErrWouldBlock {
				if lc.hup && fr.WaitedUnread() {
					fr.BeginRaw(fd) // read on to the end of the stream
					continue
				}
				return loopIdle
			}
			if err != nil {
				l.fc.writeProtocolError(err)
				return loopEnd
			}
			used, free := fr.BufStats()
			c.qbuf.Store(int64(used))
			c.qbufFree.Store(int64(free))
			l.cmds, l.have = cmds, true
		}
		covered := lc.covered
		lc.covered = false
		switch e.s.loopable(c, l.cmds) {
		case fitNo:
			if mayWaitForData(l.cmds) || !plainClient(c) {
				return loopHandOff
			}
			return loopLend
		case fitBarrier:
			if !covered {
				return loopBarrier
			}
		}
		if !l.begin() {
			return loopEnd
		}
		e.batches.Add(1)
		c.startBatch(l.cmds, covered)
		c.endView()
		c.proposeGathered()
		if len(c.pending) > 0 {
			return loopPending
		}
		c.endBatch()
		if !e.flush(lc, fd) {
			return loopHandOff
		}
		if c.quit || c.isKilled() || c.outClosed {
			return loopEnd
		}
	}
}

// flush writes lc's waiting replies if the socket takes them at once;
// false: it took part of them (the rest is kept, for the connection's
// goroutine to write).
func (e *evLoop) flush(lc *loopConn, fd int) bool {
	l, c := lc.l, lc.l.c
	if c.outClosed || c.w.Len() == 0 {
		l.flush()
		return true
	}
	b := c.w.Bytes()
	n, err := syscall.Write(fd, b)
	if n < 0 {
		n = 0
	}
	c.s.stats.netOut.Add(int64(n))
	if n == len(b) {
		c.sent()
		l.landed()
		return true
	}
	if err != nil && err != syscall.EAGAIN {
		return true // the next read ends the connection
	}
	c.taken += n
	rest := append([]byte(nil), b[n:]...)
	c.w.Reset()
	c.w.Raw(rest)
	return false
}
