package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/raft"
)

// DefaultSegmentSize is the size past which a new segment is started.
const DefaultSegmentSize = 32 << 20

// Options configure a Log.
type Options struct {
	// SyncEveryBatch makes StoreLogs fdatasync before returning. Without
	// it the owner calls Sync on its own schedule.
	SyncEveryBatch bool
	// SegmentSize is the size past which a new segment is started
	// (default DefaultSegmentSize).
	SegmentSize int64
	// Logf, if set, is told about repairs Open makes (a torn tail cut).
	Logf func(format string, args ...any)
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
	dirty  bool     // (w) appended since the last sync
	failed error    // (w) a write or sync failed: the file state is unknown
	closed bool     // (w)

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
	path  string   //
	f     *os.File //
	offs  []uint32 // file offset of entry first+i
	size  int64    // bytes of valid content (the file's length)
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts}
	if err := l.recover(); err != nil {
		for _, s := range l.segs {
			s.f.Close()
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

func (l *Log) recover() error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var bases []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".seg")
		if !ok || e.IsDir() {
			continue
		}
		b, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			return fmt.Errorf("wal: unexpected file %s in %s", e.Name(), l.dir)
		}
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for i, base := range bases {
		last := i == len(bases)-1
		path := filepath.Join(l.dir, segmentName(base))
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(b) < segHeaderLen || string(b[:8]) != segmentMagic || binary.LittleEndian.Uint64(b[8:]) != base {
			if !last || validBatchAfter(b, 0) {
				return corruptf("segment %s: bad header", path)
			}
			// A crash while the segment was being created: it holds
			// nothing that was acknowledged (no batch follows).
			l.logf("wal: removing %s: incomplete segment header", path)
			if err := os.Remove(path); err != nil {
				return err
			}
			continue
		}
		offs, end, err := scanSegment(b, base, last)
		if err != nil {
			return fmt.Errorf("%w (%s)", err, path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		if end < len(b) {
			l.logf("wal: %s: cutting a torn final write (%d bytes at offset %d)", path, len(b)-end, end)
			if err := f.Truncate(int64(end)); err == nil {
				err = datasync(f)
			}
			if err != nil {
				f.Close()
				return err
			}
		}
		s := &segment{base: base, first: base, path: path, f: f, offs: offs, size: int64(end)}
		if n := len(l.segs); n > 0 {
			prev := l.segs[n-1]
			if len(prev.offs) == 0 || prev.lastIndex()+1 != base {
				f.Close()
				return corruptf("segment %s does not follow %s", path, prev.path)
			}
		}
		l.segs = append(l.segs, s)
	}
	if len(l.segs) > 0 && len(l.segs[0].offs) > 0 {
		l.first = l.segs[0].base
		last := l.segs[len(l.segs)-1]
		if len(last.offs) > 0 {
			l.last = last.lastIndex()
		} else {
			l.last = last.base - 1
		}
	}
	return nil
}

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
// (any index when the log is empty), with one write.
func (l *Log) StoreLogs(logs []*raft.Log) error {
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
	}
	l.buf, l.offs = appendBatch(l.buf[:0], logs, l.offs[:0])
	if len(l.buf)-batchHdrLen > maxBatchBody {
		return fmt.Errorf("wal: StoreLogs: batch of %d bytes is too large", len(l.buf))
	}
	s, err := l.activeFor(logs[0].Index, int64(len(l.buf)))
	if err != nil {
		return err
	}
	if _, err := s.f.WriteAt(l.buf, s.size); err != nil {
		l.failed = fmt.Errorf("wal: append: %w", err)
		s.f.Truncate(s.size)
		return l.failed
	}
	if l.opts.SyncEveryBatch {
		if err := datasync(s.f); err != nil {
			l.failed = fmt.Errorf("wal: fdatasync: %w", err)
			return l.failed
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
	return nil
}

func (l *Log) usable() error {
	if l.closed {
		return ErrClosed
	}
	return l.failed
}

// activeFor returns the segment the next batch (n bytes, first index
// first) goes into, starting a new one when the log is empty or the
// active one is full.
func (l *Log) activeFor(first uint64, n int64) (*segment, error) {
	if k := len(l.segs); k > 0 {
		s := l.segs[k-1]
		if len(s.offs) == 0 && s.base == first {
			return s, nil
		}
		if len(s.offs) > 0 && s.size+n <= l.opts.SegmentSize {
			return s, nil
		}
		if len(s.offs) > 0 {
			// Seal the full segment: durable before anything follows it,
			// so only the last segment can ever have a torn tail.
			if err := datasync(s.f); err != nil {
				l.failed = fmt.Errorf("wal: sealing segment: %w", err)
				return nil, l.failed
			}
		} else if err := l.removeSegments(k - 1); err != nil { // an empty segment with another base
			return nil, err
		}
	}
	s, err := l.createSegment(first)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.segs = append(l.segs, s)
	l.mu.Unlock()
	return s, nil
}

func (l *Log) createSegment(base uint64) (*segment, error) {
	path := filepath.Join(l.dir, segmentName(base))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(segmentHeader(base)); err == nil {
		err = datasync(f)
	}
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("wal: creating segment: %w", err)
	}
	return &segment{base: base, first: base, path: path, f: f, size: segHeaderLen}, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeSegments closes and deletes l.segs[from:]. Called with wmu held.
func (l *Log) removeSegments(from int) error {
	l.mu.Lock()
	gone := l.segs[from:]
	l.segs = l.segs[:from:from]
	l.mu.Unlock()
	return l.deleteFiles(gone)
}

func (l *Log) deleteFiles(gone []*segment) error {
	var first error
	for _, s := range gone {
		s.f.Close()
		if err := os.Remove(s.path); err != nil && first == nil {
			first = err
		}
	}
	if len(gone) > 0 {
		if err := syncDir(l.dir); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// DeleteRange deletes entries min through max: a prefix (after a
// snapshot), a suffix (a follower's conflicting entries), or everything.
func (l *Log) DeleteRange(min, max uint64) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if l.first == 0 || max < l.first || min > l.last || min > max {
		return nil
	}
	switch {
	case min <= l.first && max >= l.last:
		// The segments and the bounds change in one step: a reader must
		// never see bounds that name entries without their segments.
		l.mu.Lock()
		gone := l.segs
		l.segs = l.segs[:0:0]
		l.first, l.last = 0, 0
		l.mu.Unlock()
		return l.deleteFiles(gone)
	case min <= l.first:
		return l.deletePrefix(max)
	case max >= l.last:
		return l.deleteSuffix(min)
	}
	return fmt.Errorf("wal: DeleteRange(%d, %d) is neither a prefix nor a suffix of [%d, %d]", min, max, l.first, l.last)
}

// deletePrefix moves the first index past max, removes the segments that
// fall wholly below it (never the active one) and drops the deleted
// entries' offsets from the index, so the index holds only what raft
// keeps (its trailing logs), however large the segment.
func (l *Log) deletePrefix(max uint64) error {
	l.mu.Lock()
	l.first = max + 1
	k := 0
	for k < len(l.segs)-1 && l.segs[k].lastIndex() <= max {
		k++
	}
	gone := append([]*segment(nil), l.segs[:k]...)
	l.segs = append(l.segs[:0], l.segs[k:]...)
	if s := l.segs[0]; s.first < l.first {
		n := l.first - s.first
		s.first = l.first
		if rest := s.offs[n:]; len(rest) < cap(s.offs)/2 {
			s.offs = append(make([]uint32, 0, len(rest)+len(rest)/4), rest...)
		} else {
			s.offs = rest
		}
	}
	l.mu.Unlock()
	return l.deleteFiles(gone)
}

// deleteSuffix removes entries min and after.
func (l *Log) deleteSuffix(min uint64) error {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > min }) - 1
	s := l.segs[i]
	var gone []*segment
	l.mu.Lock()
	gone = append(gone, l.segs[i+1:]...)
	l.segs = l.segs[:i+1]
	l.last = min - 1
	l.mu.Unlock()
	if err := l.deleteFiles(gone); err != nil {
		return err
	}
	if min == s.first { // the whole segment goes (it is not the first: min > first)
		return l.removeSegments(i)
	}
	cut := int64(s.offs[min-s.first])
	if err := cutBatch(s.f, cut); err != nil {
		l.failed = fmt.Errorf("wal: truncating: %w", err)
		return l.failed
	}
	l.mu.Lock()
	s.offs = s.offs[:min-s.first]
	s.size = cut
	l.mu.Unlock()
	return nil
}

// cutBatch truncates a segment file at entry offset cut. When the cut
// falls inside a batch, that batch's header is rewritten to end there, so
// recovery does not mistake the shortened batch for a torn write.
func cutBatch(f *os.File, cut int64) error {
	b := make([]byte, cut)
	if _, err := f.ReadAt(b, 0); err != nil {
		return err
	}
	off := segHeaderLen
	for off < len(b) {
		body, _, ok := batchHeader(b[off:])
		if !ok {
			return corruptf("damaged batch at offset %d while truncating", off)
		}
		end := off + batchHdrLen + int(body)
		if end > len(b) { // the cut is inside this batch
			count := 0
			for p := off + batchHdrLen; p < len(b); {
				n, ok := entryLen(b[p:])
				if !ok {
					return corruptf("damaged entry at offset %d while truncating", p)
				}
				p += n
				count++
			}
			hdr := make([]byte, batchHdrLen)
			putBatchHeader(hdr, uint32(len(b)-off-batchHdrLen), uint32(count))
			if _, err := f.WriteAt(hdr, int64(off)); err != nil {
				return err
			}
			break
		}
		off = end
	}
	if err := f.Truncate(cut); err != nil {
		return err
	}
	return datasync(f)
}

// Sync makes every appended entry durable. Appends continue while it
// runs.
func (l *Log) Sync() error {
	l.wmu.Lock()
	if l.closed || !l.dirty || len(l.segs) == 0 {
		l.wmu.Unlock()
		return nil
	}
	f := l.segs[len(l.segs)-1].f
	l.dirty = false
	l.wmu.Unlock()
	if err := datasync(f); err != nil && !errors.Is(err, os.ErrClosed) {
		l.wmu.Lock()
		l.dirty = true
		l.wmu.Unlock()
		return err
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
	var err error
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.segs {
		if i == len(l.segs)-1 && l.failed == nil {
			err = datasync(s.f)
		}
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
	}
	l.segs = nil
	return err
}
