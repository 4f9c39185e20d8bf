package wal

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
)

// Appends through a mapping. On Linux, without an fdatasync per batch
// (everysec), a batch that lands in the zeros preallocated ahead of the
// appends (prealloc.go) is copied into a shared mapping of that part of
// the file instead of written with pwrite.
//
// There the pwrite was the log's whole cost per append, and a tenth of
// goblind's CPU per command with one client: a system call, and the file
// system looking up the page and its buffers on every write. A copy into
// a mapped page faults only on the first write to the page after the
// kernel wrote it back (cleaning a page write-protects it): once every few
// dozen appends. With an fdatasync per batch every batch would fault
// instead, and a large batch faults on every page it fills: such a fault,
// with the file system's handling of a page made writable, costs more than
// a pwrite (docs/benchmarks.md), so SyncEveryBatch and batches over mapMax
// keep pwrite.
//
// Durability does not change: the mapping shows the same page cache pwrite
// wrote to, fdatasync of the file writes back the pages dirtied through
// it, and a process killed after the copy leaves them to the kernel as it
// would a written page. Recovery and GetLog read with pread and see the
// same pages.
//
// The zeros are blocks already written, so on a file system that
// overwrites in place (ext4, XFS) a copy into them never allocates and a
// full disk cannot fault it. What can is the file cut behind the log's
// back, a page that cannot be read back in (an I/O error), or a
// copy-on-write file system out of space: the copy runs with the
// runtime's panic on fault, and a fault is a failed append like a failed
// pwrite (StoreLogs cuts the batch and returns the error).
//
// The window mapped runs from the page holding the end of the content to
// the end of the zeros (at most preallocChunk and a page); it is mapped
// again when preallocation extends the zeros, and unmapped when the
// segment is sealed, cut or closed, so the resident memory it adds is at
// most that window.

var pageSize = int64(os.Getpagesize())

// mapMax is the largest batch copied through the mapping. A page the copy
// reaches for the first time since it was mapped or written back faults,
// so a batch costs a fault per page it starts; a pwrite costs one system
// call whatever its length. Batches of a quarter page or less fault once
// in four at most.
var mapMax = int(pageSize / 4)

// window is the part of a segment file mapped for appends: the file's
// bytes from off on.
type window struct {
	off int64
	b   []byte
}

// copyMapped copies b to off in s through its mapping of the zeros
// preallocated ahead of the appends, mapping them first when the window
// does not cover them. ok is false when the mapping cannot take b (not
// preallocated, or mapping failed): the caller writes it with pwrite.
func (l *Log) copyMapped(s *segment, b []byte, off int64) (ok bool, err error) {
	end := off + int64(len(b))
	if !l.opts.Preallocate || l.opts.SyncEveryBatch || len(b) > mapMax || end > s.alloc {
		return false, nil
	}
	w := s.win
	if w.b == nil || off < w.off || end > w.off+int64(len(w.b)) {
		s.unmap()
		from := off &^ (pageSize - 1)
		m, merr := mapFile(s.f, from, int(s.alloc-from))
		if merr != nil {
			return false, nil
		}
		s.win = window{off: from, b: m}
		w = s.win
	}
	// A fault while copying (the file cut behind the log's back, an I/O
	// error reading a page in) is a failed write, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			f, fault := r.(interface{ Addr() uintptr })
			if !fault {
				panic(r)
			}
			s.unmap()
			err = fmt.Errorf("a fault at %#x writing through the file's mapping (the file was cut, or a page could not be read)", f.Addr())
		}
	}()
	copy(w.b[off-w.off:], b)
	return true, nil
}

// mapFile maps n bytes of f from off, shared and writable.
func mapFile(f *os.File, off int64, n int) (m []byte, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if cerr := rc.Control(func(fd uintptr) {
		m, err = syscall.Mmap(int(fd), off, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	}); cerr != nil {
		return nil, cerr
	}
	return m, err
}

// unmap drops s's mapping, if any.
func (s *segment) unmap() {
	if s.win.b != nil {
		syscall.Munmap(s.win.b)
		s.win = window{}
	}
}
