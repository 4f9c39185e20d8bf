//go:build linux && (amd64 || arm64)

package wal

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// An fdatasync that leaves the thread free (Options.SyncBeside):
// submitted through Linux's asynchronous I/O (IOCB_CMD_FDSYNC, which the
// kernel runs on a worker of its own), its completion signalled on an
// eventfd that the goroutine waits for in Go's poller, like a socket.
//
// A plain fdatasync is a system call that blocks the thread for as long
// as the disk takes, and the thread keeps its P (Go's right to run Go
// code) meanwhile: the scheduler gives the P to another thread only when
// its monitor notices a call running long, and on a node running one
// thread of Go code (--procs, the default on two CPUs or fewer) it did
// not. In Go's execution trace of a 3-node cluster under 50 clients
// (ZADD -P 1 through the leader), no other goroutine ran on the leader
// during any of its 1,236 deferred syncs, 340 µs each on average (the
// client replies, the next requests and the AppendEntries to the second
// follower waited), nor on a follower during any of its 1,168 (408 µs);
// a single node's 3,370 syncs, 157 µs each, the same.
//
// The cost is the wake-up: Go's poller is read when the thread has
// nothing else to run, so a sync that ends while goroutines are queued
// is seen only after them. For a cluster's nodes the thread freed wins
// (ZADD -P 1 through the leader a tenth faster, 10 alternated pairs);
// for a single node's synchronous appends, where every write waits for
// the sync and nothing else is pressing, it lost (a tenth slower), so a
// single node syncs the plain way.
//
// Each call takes a slot: an AIO context of one request and its eventfd,
// so that the completion it reaps is its own; slots are kept for reuse,
// as many as syncs ever ran at once. Where AIO is unavailable (a kernel
// without it, a seccomp profile that refuses io_setup) or refuses a file,
// the plain fdatasync runs instead.

// iocb is the kernel's struct iocb on a little-endian machine.
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   uint32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

// The kernel reads 64 bytes of an iocb.
var _ [64]byte = [unsafe.Sizeof(iocb{})]byte{}

// ioEvent is the kernel's struct io_event.
type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

const (
	iocbCmdFdsync = 3
	iocbFlagResfd = 1 << 0
)

// aioSlot is one AIO context and the eventfd its completions signal.
type aioSlot struct {
	ctx uint64
	efd int
	ev  *os.File // efd, non-blocking, read through Go's poller
}

var aio struct {
	mu   sync.Mutex
	free []*aioSlot
	off  bool  // AIO is unavailable here: plain fdatasync
	why  error // what made it so
}

// aioProbe sets up AIO for the syncs to come (one slot, kept), or
// returns why this process cannot use it.
func aioProbe() error {
	if s := takeSlot(); s != nil {
		putSlot(s)
		return nil
	}
	aio.mu.Lock()
	defer aio.mu.Unlock()
	return aio.why
}

// aioSyncs counts the fdatasyncs done through AIO (for tests).
var aioSyncs atomic.Int64

// aioDatasync syncs fd's data asynchronously and waits for it without
// holding the thread; done is false when it could not be submitted, and
// the caller syncs it the plain way.
func aioDatasync(fd int) (done bool, err error) {
	s := takeSlot()
	if s == nil {
		return false, nil
	}
	if s.submit(fd) != nil {
		// Not taken (a file without an fsync of its own, a limit
		// reached): the plain call answers for it.
		putSlot(s)
		return false, nil
	}
	ev, err := s.wait()
	if err != nil {
		// Its completion lost (not seen to happen): the slot is not
		// reused (closing it waits for the request), and the plain call
		// syncs the file.
		s.close()
		return false, nil
	}
	putSlot(s)
	aioSyncs.Add(1)
	if ev.res < 0 {
		return true, syscall.Errno(-ev.res)
	}
	return true, nil
}

// submit starts an fdatasync of fd on s, its completion to be signalled
// on s's eventfd.
func (s *aioSlot) submit(fd int) error {
	cb := iocb{opcode: iocbCmdFdsync, fildes: uint32(fd), flags: iocbFlagResfd, resfd: uint32(s.efd)}
	cbs := [1]*iocb{&cb}
	for {
		_, _, e := syscall.Syscall(syscall.SYS_IO_SUBMIT, uintptr(s.ctx), 1, uintptr(unsafe.Pointer(&cbs[0])))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// wait returns the completion of the one request in flight on s. It
// reads the eventfd before it looks for the completion: the request was
// submitted a moment ago and a worker thread has yet to run it, so an
// io_getevents first would find nothing, a system call a sync for
// nothing. The read is tried before Go's poller waits (a completion that
// came first ends the wait at once), and once it returns the completion
// is there to reap.
func (s *aioSlot) wait() (ioEvent, error) {
	var ev ioEvent
	var buf [8]byte
	for {
		if _, err := s.ev.Read(buf[:]); err != nil {
			// Without the poller, wait in the kernel: the request must
			// end before the file may be closed.
			if done, rerr := s.reap(&ev, true); !done || rerr != nil {
				return ev, err
			}
			return ev, nil
		}
		if done, err := s.reap(&ev, false); done || err != nil {
			return ev, err
		}
	}
}

// reap takes s's completion into ev if it is there (done), or, with
// block, once it is.
func (s *aioSlot) reap(ev *ioEvent, block bool) (done bool, err error) {
	var timeout *syscall.Timespec // none: wait
	if !block {
		timeout = &syscall.Timespec{}
	}
	for {
		n, _, e := syscall.Syscall6(syscall.SYS_IO_GETEVENTS, uintptr(s.ctx), 1, 1,
			uintptr(unsafe.Pointer(ev)), uintptr(unsafe.Pointer(timeout)), 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return false, e
		}
		return n == 1, nil
	}
}

func takeSlot() *aioSlot {
	aio.mu.Lock()
	defer aio.mu.Unlock()
	if aio.off {
		return nil
	}
	if n := len(aio.free); n > 0 {
		s := aio.free[n-1]
		aio.free = aio.free[:n-1]
		return s
	}
	s, err := newSlot()
	if err != nil {
		aio.off, aio.why = true, err
		return nil
	}
	return s
}

func putSlot(s *aioSlot) {
	aio.mu.Lock()
	aio.free = append(aio.free, s)
	aio.mu.Unlock()
}

func newSlot() (*aioSlot, error) {
	var ctx uint64
	if _, _, e := syscall.Syscall(syscall.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return nil, e
	}
	efd, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		syscall.Syscall(syscall.SYS_IO_DESTROY, uintptr(ctx), 0, 0)
		return nil, e
	}
	return &aioSlot{ctx: ctx, efd: int(efd), ev: os.NewFile(efd, "aio-eventfd")}, nil
}

func (s *aioSlot) close() {
	syscall.Syscall(syscall.SYS_IO_DESTROY, uintptr(s.ctx), 0, 0)
	s.ev.Close()
}
