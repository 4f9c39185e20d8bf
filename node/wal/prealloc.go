package wal

// Preallocation: the active segment's file is kept zero-filled ahead of
// its appends (Options.Preallocate).
//
// An append that grows a file changes its size, and fdatasync must then
// commit the file system's metadata as well as the data: on ext4 a
// journal commit and a second flush. Overwriting blocks that already
// exist only writes the data. On the machines Goblin is measured on a
// 4 KiB O_DSYNC write takes several times longer when it grows the file
// than when it overwrites it (docs/benchmarks.md), and under --fsync
// always every write pays it.
//
// So before a batch would pass the zero-filled end of the segment, the
// next preallocChunk bytes are written as zeros, in the same write-back
// as that batch: one metadata commit per chunk instead of one per batch.
// The zeros are real writes, not fallocate: an unwritten extent is
// converted on its first write, which is a metadata change again.
//
// Recovery (scan.go) takes zeros running from a batch boundary to the end
// of the last segment as the end of the log, not as a torn write, and
// keeps them for the next appends. A segment is cut back to its content
// when sealed, so only the last segment ever has a zero tail, and a
// truncation (a failed append, a suffix deletion) simply ends the
// preallocation of that segment. Preallocation never makes an append
// fail: a chunk that cannot be written (a full disk) is given up, and the
// batch is written as it would have been without it.

// preallocChunk is how much is zero-filled at a time.
const preallocChunk = 1 << 20

var zeroChunk = make([]byte, preallocChunk)

// preallocate makes sure n more bytes at the end of s overwrite zeros
// that are already in the file, when Options.Preallocate is set.
func (l *Log) preallocate(s *segment, n int64) {
	if !l.opts.Preallocate || s.ver != v2 || s.size+n <= s.alloc {
		return
	}
	from := max(s.alloc, s.size)
	to := min(from+preallocChunk, l.opts.SegmentSize)
	if to < s.size+n {
		return // a batch that fills the segment: it grows the file itself
	}
	if err := l.inject(OpPrealloc); err == nil {
		if _, err = s.f.WriteAt(zeroChunk[:to-from], from); err == nil {
			s.alloc = to
			return
		}
	}
	// Give the chunk up. Whatever part of it was written is zeros, which
	// recovery takes as the end of the log; if it cannot be cut now,
	// sealing cuts it.
	if s.f.Truncate(from) != nil {
		s.alloc = to
	}
}

// sealLength cuts the zeros after a segment's content, before it is
// sealed.
func (l *Log) sealLength(s *segment) error {
	s.unmap()
	if s.alloc <= s.size {
		return nil
	}
	if err := s.f.Truncate(s.size); err != nil {
		return err
	}
	s.alloc = 0
	return nil
}
