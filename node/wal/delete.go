package wal

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/goblindb/goblin/internal/durable"
)

// DeleteRange deletes entries min through max: a prefix (after a
// snapshot), a suffix (a follower's conflicting entries), or everything.
// A suffix cut that fails half-way leaves appends refused until a later
// DeleteRange succeeds (raft retries the deletion of entries that still
// conflict).
func (l *Log) DeleteRange(min, max uint64) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.first == 0 || max < l.first || min > l.last || min > max {
		return nil
	}
	switch {
	case min <= l.first && max >= l.last:
		// The segments and the bounds change in one step: a reader must
		// never see bounds that name entries without their segments.
		if err := l.removeSegmentsAnd(0, func() { l.first, l.last = 0, 0 }); err != nil {
			return err
		}
		l.failed = nil
		return nil
	case min <= l.first:
		return l.deletePrefix(max)
	case max >= l.last:
		if err := l.deleteSuffix(min); err != nil {
			return err
		}
		l.failed = nil
		return nil
	}
	return fmt.Errorf("wal: DeleteRange(%d, %d) is neither a prefix nor a suffix of [%d, %d]", min, max, l.first, l.last)
}

// removeSegments closes and deletes l.segs[from:], first recording the
// new last segment in the manifest. Once the manifest is written the
// segments are gone from the index whatever happens; files that could not
// be removed are removed before the next segment is created. Called with
// wmu held.
func (l *Log) removeSegments(from int) error { return l.removeSegmentsAnd(from, nil) }

// removeSegmentsAnd is removeSegments that also runs also, under the same
// hold of mu as the index change, when it is not nil.
func (l *Log) removeSegmentsAnd(from int, also func()) error {
	var last uint64
	if from > 0 {
		last = l.segs[from-1].base
	}
	if _, err := l.writeManifest(last); err != nil {
		return err
	}
	l.mu.Lock()
	gone := l.segs[from:]
	l.segs = l.segs[:from:from]
	if also != nil {
		also()
	}
	l.mu.Unlock()
	err := l.deleteFiles(gone)
	if err != nil {
		for _, s := range gone {
			l.stale = append(l.stale, s.path)
		}
	}
	return err
}

func (l *Log) deleteFiles(gone []*segment) error {
	var first error
	for _, s := range gone {
		s.gen++
		s.close()
		if l.repair == s {
			l.repair = nil
		}
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	if len(gone) > 0 {
		if err := durable.SyncDir(l.dir); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// removeStale removes the files of segments a failed deletion left
// behind, which must not follow the log's new segments.
func (l *Log) removeStale() error {
	for len(l.stale) > 0 {
		if err := os.Remove(l.stale[0]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wal: removing a deleted segment: %w", err)
		}
		l.stale = l.stale[1:]
	}
	return durable.SyncDir(l.dir)
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

// deleteSuffix removes entries min and after. The index changes only once
// the files did: a cut that fails leaves the entries in place, and
// appends refused until the deletion is tried again and succeeds.
func (l *Log) deleteSuffix(min uint64) error {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > min }) - 1
	s := l.segs[i]
	if min == s.first { // the whole segment goes (it is not the first: min > first)
		if err := l.removeSegments(i); err != nil {
			return err
		}
		l.mu.Lock()
		l.last = min - 1
		l.mu.Unlock()
		return nil
	}
	if i+1 < len(l.segs) {
		if err := l.removeSegments(i + 1); err != nil {
			return err
		}
		l.mu.Lock()
		l.last = s.lastIndex()
		l.mu.Unlock()
	}
	cut := int64(s.offs[min-s.first])
	if err := l.cutSegment(s, cut); err != nil {
		l.failed = fmt.Errorf("wal: truncating: %w", err)
		return l.failed
	}
	l.mu.Lock()
	s.offs = s.offs[:min-s.first]
	s.size = cut
	l.last = min - 1
	l.mu.Unlock()
	return nil
}

// cutSegment truncates s at entry offset cut. The sync mark is lowered
// (durably) first, so a crash during the cut never leaves a mark claiming
// bytes that are gone.
func (l *Log) cutSegment(s *segment, cut int64) error {
	if err := l.inject(OpTruncate); err != nil {
		return err
	}
	s.gen++
	if s.synced > cut {
		s.synced = cut
	}
	if s.ver == v2 && s.mark > cut {
		l.writeMark(s)
		if s.mark > cut {
			return fmt.Errorf("lowering the sync mark of %s failed", s.path)
		}
		if err := datasync(s.f); err != nil {
			return err
		}
	}
	s.unmap()
	if err := cutBatch(s.f, s.ver, cut); err != nil {
		return err
	}
	s.alloc = 0
	return nil
}

// cutBatch truncates a segment file of version v at entry offset cut.
// When the cut falls inside a batch, that batch's header is rewritten to
// end there, so recovery does not mistake the shortened batch for a torn
// write.
func cutBatch(f *os.File, v version, cut int64) error {
	b := make([]byte, cut)
	if _, err := f.ReadAt(b, 0); err != nil {
		return err
	}
	hlen := v.batchHdrLen()
	off := v.segHeaderLen()
	for off < len(b) {
		body, _, synced, ok := batchHeader(b[off:], v)
		if !ok {
			return corruptf("damaged batch at offset %d while truncating", off)
		}
		end := off + hlen + int(body)
		if end > len(b) { // the cut is inside this batch
			count := 0
			for p := off + hlen; p < len(b); {
				n, ok := entryLen(b[p:])
				if !ok {
					return corruptf("damaged entry at offset %d while truncating", p)
				}
				p += n
				count++
			}
			hdr := make([]byte, hlen)
			putBatchHeader(hdr, v, uint32(len(b)-off-hlen), uint32(count), synced)
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
