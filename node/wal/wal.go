package wal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/durable"
)

// DefaultSegmentSize is the size past which a new segment is started.
const DefaultSegmentSize = 32 << 20

// Options configure a Log.
type Options struct {
	// SyncEveryBatch makes StoreLogs fdatasync before returning. Without
	// it the owner calls Sync on its own schedule.
	SyncEveryBatch bool
	// SegmentSize is the size past which a new segment is started
	// (default DefaultSegmentSize, at most 1 GiB).
	SegmentSize int64
	// Logf, if set, is told about repairs Open makes (a torn tail cut).
	Logf func(format string, args ...any)
	// Inject, if set, is asked before each file operation Op names; an
	// error it returns is taken as that operation's error (a failed write
	// writes half its bytes first). Tests use it to play a failing disk.
	Inject func(op Op) error
	// OnSync, when set, is told how long each fdatasync of a segment took
	// (metrics).
	OnSync func(time.Duration)
	// Preallocate zero-fills the active segment ahead of its appends, so
	// that an fdatasync rarely has to commit a change of the file's size
	// (prealloc.go).
	Preallocate bool
	// SyncBeside makes each fdatasync wait without holding the thread
	// that runs Go code, where the system allows (aiosync_linux.go): for
	// a node whose other goroutines have work meanwhile (a cluster's
	// nodes; a single node's writes measured faster without it).
	SyncBeside bool
}

// Log is a segmented append-only raft.LogStore. It is safe for concurrent
// use: raft appends and deletes from its main goroutine while replication
// and the FSM read.
type Log struct {
	dir  string
	opts Options

	// wmu serializes the writers: StoreLogs, DeleteRange, Sync's
	// bookkeeping and Close. Fields below marked (w) are only touched with
	// it held.
	wmu    sync.Mutex
	buf    []byte   // (w) encoding buffer
	offs   []uint32 // (w) scratch offsets
	mark   []byte   // (w) sync mark buffer
	dirty  bool     // (w) appended since the last sync
	closed bool     // (w)
	// markTimer writes the sync mark markDelay after a fdatasync
	// (mark.go), when markArmed; markedAt is when the mark was last
	// written. (w)
	markTimer *time.Timer
	markArmed bool
	markedAt  time.Time
	// repair is a segment holding part of an append that failed and could
	// not be cut yet: the next append cuts it first. (w)
	repair *segment
	// failed is set when a suffix cut failed half-way: appends are
	// refused until a DeleteRange succeeds (raft retries it). (w)
	failed error
	// stale lists segment files a deletion could not remove; they go
	// before a new segment is created. (w)
	stale []string
	// manifest is the last segment base the manifest records; manifestOK
	// is false when writing it failed after the rename, so it may not be
	// durable. (w)
	manifest   uint64
	manifestOK bool
	// blank: Open found neither a manifest nor a segment. Open writes
	// the manifest of a new log at once, so a log that ever held an
	// entry is never blank again unless its files were removed.
	blank bool

	// mu guards the index for readers; writers hold it (exclusively) only
	// while changing it, never during I/O on the active segment.
	mu    sync.RWMutex
	segs  []*segment
	first uint64 // index of the first entry; 0 when empty
	last  uint64 // index of the last entry; 0 when empty
}

// segment is one file of the log.
type segment struct {
	base  uint64   // index of the file's first entry (its name)
	first uint64   // index of offs[0]: base, or later once a prefix is deleted
	ver   version  //
	path  string   //
	f     *os.File //
	offs  []uint32 // file offset of entry first+i
	size  int64    // bytes of valid content
	// alloc is where the zeros written ahead of the appends end, when
	// past size (Options.Preallocate); otherwise the file ends at size.
	alloc int64
	// synced is how many bytes are known to be on stable storage, mark
	// what the header's sync mark says (version 2; it trails synced until
	// the mark is written, mark.go, or when writing it failed). gen counts
	// truncations and removal, so a Sync running without the lock can
	// tell its result is stale. (w)
	synced, mark int64
	gen          uint64
	// win maps the preallocated zeros the next appends overwrite
	// (mapped_linux.go). (w)
	win window
}

// close unmaps and closes s's file.
func (s *segment) close() error {
	s.unmap()
	return s.f.Close()
}

func (s *segment) lastIndex() uint64 { return s.first + uint64(len(s.offs)) - 1 }

var (
	_ raft.LogStore          = (*Log)(nil)
	_ raft.MonotonicLogStore = (*Log)(nil)
)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("wal: log closed")

func segmentName(base uint64) string { return fmt.Sprintf("%020d.seg", base) }

// Open opens (creating if needed) the log in dir, checking every entry
// and repairing a torn final write. See the package documentation.
func Open(dir string, opts Options) (*Log, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.SegmentSize > maxSegmentSize {
		return nil, fmt.Errorf("wal: segment size %d is over the limit of %d", opts.SegmentSize, maxSegmentSize)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, mark: make([]byte, markLen)}
	if opts.SyncBeside {
		if err := aioProbe(); err != nil {
			l.logf("fdatasync through Linux AIO is unavailable (%v): the log syncs with a plain fdatasync, "+
				"which holds a thread running Go code while the disk syncs", err)
		}
	}
	if err := l.recover(); err != nil {
		for _, s := range l.segs {
			s.close()
		}
		return nil, err
	}
	return l, nil
}

func (l *Log) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}

// Blank reports whether Open found the directory without a manifest or
// a segment: a new log, or one whose files were all removed.
func (l *Log) Blank() bool { return l.blank }

// IsMonotonic tells raft the store cannot hold gaps.
func (l *Log) IsMonotonic() bool { return true }

// FirstIndex returns the first index stored, 0 when empty.
func (l *Log) FirstIndex() (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.first, nil
}

// LastIndex returns the last index stored, 0 when empty.
func (l *Log) LastIndex() (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.last, nil
}

// GetLog reads the entry at index into log.
func (l *Log) GetLog(index uint64, log *raft.Log) error {
	l.mu.RLock()
	if l.first == 0 || index < l.first || index > l.last {
		l.mu.RUnlock()
		return raft.ErrLogNotFound
	}
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > index }) - 1
	s := l.segs[i]
	k := index - s.first
	off, end := int64(s.offs[k]), s.size
	if k+1 < uint64(len(s.offs)) {
		end = int64(s.offs[k+1])
	}
	buf := make([]byte, end-off)
	got, err := s.f.ReadAt(buf, off)
	l.mu.RUnlock()
	if err != nil && !(errors.Is(err, io.EOF) && got == len(buf)) {
		return fmt.Errorf("wal: reading entry %d: %w", index, err)
	}
	n, ok := entryLen(buf)
	if !ok {
		return corruptf("entry %d: bad length", index)
	}
	if err := decodeEntry(buf[:n], log); err != nil {
		return fmt.Errorf("entry %d: %w", index, err)
	}
	if log.Index != index {
		return corruptf("entry at index %d says %d", index, log.Index)
	}
	return nil
}

// StoreLog appends one entry.
func (l *Log) StoreLog(log *raft.Log) error { return l.StoreLogs([]*raft.Log{log}) }

// StoreLogs appends entries, which must follow the last one without a gap
// (any index when the log is empty), with one write. When the write or
// its fdatasync fails (a full disk, an I/O error), whatever part of the
// batch reached the file is cut before StoreLogs returns the error, so the
// log holds exactly what it held before and the next call can simply try
// again.
func (l *Log) StoreLogs(logs []*raft.Log) error {
	return l.storeLogs(logs, l.opts.SyncEveryBatch)
}

// StoreLogsDeferred appends entries as StoreLogs does but without the
// fdatasync, whatever Options.SyncEveryBatch says: they are durable once a
// later Sync (or a synced append) returns.
func (l *Log) StoreLogsDeferred(logs []*raft.Log) error {
	return l.storeLogs(logs, false)
}

func (l *Log) storeLogs(logs []*raft.Log, syncNow bool) error {
	if len(logs) == 0 {
		return nil
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	for i, e := range logs {
		if (i == 0 && l.last != 0 && e.Index != l.last+1) || (i > 0 && e.Index != logs[i-1].Index+1) || e.Index == 0 {
			return fmt.Errorf("wal: StoreLogs: index %d does not follow %d", e.Index, l.last)
		}
		if n, most := len(e.Extensions)+len(e.Data), batchLimit-entryHdrLen-payloadFixed; n > most {
			return fmt.Errorf("%w: entry %d holds %d bytes, at most %d", ErrEntryTooLarge, e.Index, n, most)
		}
	}
	if err := l.repairAppend(); err != nil {
		return err
	}
	// Entries that together pass the largest batch go in several, all or
	// none of them.
	for from := 0; from < len(logs); {
		to, body := from+1, recordLen(logs[from])
		for ; to < len(logs); to++ {
			if body += recordLen(logs[to]); body > batchLimit {
				break
			}
		}
		if err := l.storeBatch(logs[from:to], syncNow); err != nil {
			if from > 0 {
				if uerr := l.undoStore(logs[0].Index); uerr != nil {
					err = fmt.Errorf("%w (cutting the batches written before it: %v)", err, uerr)
				}
			}
			return err
		}
		from = to
	}
	if cap(l.buf) > maxKeptBuf {
		l.buf = nil // a large batch's copy is not kept for the next
	}
	return nil
}

// batchLimit is the largest batch body StoreLogs writes: maxBatchBody
// (tests lower it).
var batchLimit = maxBatchBody

// maxKeptBuf is the largest batch buffer kept between appends.
const maxKeptBuf = 16 << 20

// storeBatch appends entries as one batch. Called with wmu held.
func (l *Log) storeBatch(logs []*raft.Log, syncNow bool) error {
	l.buf, l.offs = appendBatch(l.buf[:0], logs, 0, l.offs[:0])
	body := len(l.buf) - batchHdrLenV2
	s, err := l.activeFor(logs[0].Index, int64(len(l.buf)))
	if err != nil {
		return err
	}
	putBatchHeader(l.buf[:batchHdrLenV2], v2, uint32(body), uint32(len(logs)), uint32(s.synced))
	l.preallocate(s, int64(len(l.buf)))
	if err := l.writeAt(s, l.buf, s.size); err != nil {
		return l.failedAppend(s, "append", err)
	}
	if syncNow {
		if err := l.sync(s.f); err != nil {
			return l.failedAppend(s, "fdatasync", err)
		}
	} else {
		l.dirty = true
	}
	l.mu.Lock()
	for _, o := range l.offs {
		s.offs = append(s.offs, uint32(s.size)+o)
	}
	s.size += int64(len(l.buf))
	if l.first == 0 {
		l.first = logs[0].Index
	}
	l.last = logs[len(logs)-1].Index
	l.mu.Unlock()
	if syncNow {
		s.synced = s.size
		l.markLater()
	}
	return nil
}

// undoStore removes the entries from min on that a StoreLogs wrote before
// one of its batches failed. Called with wmu held.
func (l *Log) undoStore(min uint64) error {
	if min <= l.first {
		return l.removeSegmentsAnd(0, func() { l.first, l.last = 0, 0 })
	}
	return l.deleteSuffix(min)
}

// failedAppend cuts a failed batch and returns the error StoreLogs gives.
func (l *Log) failedAppend(s *segment, what string, err error) error {
	if uerr := l.undoAppend(s); uerr != nil {
		return fmt.Errorf("wal: %s: %w (%v)", what, err, uerr)
	}
	return fmt.Errorf("wal: %s: %w", what, err)
}

func (l *Log) usable() error {
	if l.closed {
		return ErrClosed
	}
	return l.failed
}

// writeMark records s.synced in s's header. The mark becomes durable with
// the segment's next fdatasync; until then it may be lost, never wrong: it
// only ever claims bytes already synced. Failing to write it only weakens
// what recovery can tell, so the error is not returned.
func (l *Log) writeMark(s *segment) {
	if s.ver != v2 || s.synced == s.mark {
		return
	}
	putMark(l.mark[:], s.base, s.synced)
	if _, err := s.f.WriteAt(l.mark[:], markOff); err == nil {
		s.mark = s.synced
	}
}

// activeFor returns the segment the next batch (n bytes, first index
// first) goes into, starting a new one when the log is empty, the active
// one is full, or it is of an older format.
func (l *Log) activeFor(first uint64, n int64) (*segment, error) {
	if k := len(l.segs); k > 0 {
		s := l.segs[k-1]
		if s.ver == v2 && len(s.offs) == 0 && s.base == first {
			return s, nil
		}
		if s.ver == v2 && len(s.offs) > 0 && s.size+n <= l.opts.SegmentSize {
			return s, nil
		}
		if len(s.offs) > 0 {
			// Seal the segment: cut to its content and durable before
			// anything follows it, so only the last segment can ever
			// have a torn tail or zeros after its content.
			if err := l.sealLength(s); err != nil {
				return nil, fmt.Errorf("wal: sealing segment: %w", err)
			}
			if err := l.sync(s.f); err != nil {
				return nil, fmt.Errorf("wal: sealing segment: %w", err)
			}
			s.synced = s.size
			l.writeMark(s)
		} else if err := l.removeSegments(k - 1); err != nil { // an empty segment with another base
			return nil, err
		}
	}
	s, err := l.createSegment(first)
	if s != nil {
		l.mu.Lock()
		l.segs = append(l.segs, s)
		l.mu.Unlock()
	}
	return s, err
}

// createSegment creates the segment file for base, durably, and records
// it in the manifest. A segment is returned (with an error) when the
// manifest may record it even though writing it failed.
func (l *Log) createSegment(base uint64) (*segment, error) {
	if err := l.inject(OpCreate); err != nil {
		return nil, fmt.Errorf("wal: creating segment: %w", err)
	}
	if err := l.removeStale(); err != nil {
		return nil, err
	}
	path := filepath.Join(l.dir, segmentName(base))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("wal: creating segment: %w", err)
	}
	if _, err := f.Write(segmentHeader(base)); err == nil {
		err = datasync(f)
	}
	if err == nil {
		err = durable.SyncDir(l.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("wal: creating segment: %w", err)
	}
	s := &segment{base: base, first: base, ver: v2, path: path, f: f, size: segHeaderLenV2, synced: segHeaderLenV2, mark: segHeaderLenV2}
	if renamed, err := l.writeManifest(base); err != nil {
		if renamed {
			return s, err
		}
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return s, nil
}

// Sync makes every appended entry durable. Appends continue while it
// runs.
func (l *Log) Sync() error {
	l.wmu.Lock()
	if k := len(l.segs); k > 0 && l.segs[k-1].synced < l.segs[k-1].size {
		// Appended before Open and not known synced (a process that
		// ended before its deferred sync): synced now too.
		l.dirty = true
	}
	if l.closed || !l.dirty || len(l.segs) == 0 {
		l.wmu.Unlock()
		return nil
	}
	s := l.segs[len(l.segs)-1]
	size, gen := s.size, s.gen
	l.dirty = false
	l.wmu.Unlock()
	err := l.sync(s.f)
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return nil
		}
		l.dirty = true
		return fmt.Errorf("wal: fdatasync: %w", err)
	}
	if !l.closed && s.gen == gen && size > s.synced {
		s.synced = size
		l.markLater()
	}
	return nil
}

// Close syncs and closes the log.
func (l *Log) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.stopMark()
	var err error
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.segs {
		if i == len(l.segs)-1 && l.repair == nil && l.failed == nil && (s.synced < s.size || s.mark < s.synced) {
			// Sync, record it in the mark, and sync the mark.
			if err = datasync(s.f); err == nil {
				s.synced = s.size
				l.writeMark(s)
				err = datasync(s.f)
			}
		}
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}
	l.segs = nil
	return err
}
