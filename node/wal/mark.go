package wal

import "time"

// When the sync mark is written.
//
// The mark (format.go) lives in the segment's header, one block away from
// the batches, so a mark rewritten after every fdatasync makes the next
// fdatasync write two blocks instead of one: measured on a 2-CPU VM's
// virtual disk, 0.30 ms against 0.21 ms a fdatasync with three logs
// syncing at once, and the followers' fdatasync is most of a 3-node
// cluster's commit round. The batches need no mark while appends go on:
// each batch header records the synced offset as it was when the batch
// was written, so every synced batch but the last few is known synced
// from the batches after it, which reach the disk with the same
// fdatasyncs a mark would have ridden on.
//
// So the mark follows a fdatasync that advanced the synced offset at once
// only when it was last written markDelay ago or longer (a log synced
// once a second, everysec, marks after every fdatasync), and rides the
// next fdatasync; otherwise markDelay later. markDelay after each
// fdatasync the mark is checked: written when it trails, and
// fdatasynced when nothing was appended since, so a log that stops
// appending records its final batch as synced within markDelay; while
// appends go on, the next append's fdatasync carries it, and it is
// checked again markDelay later. Close writes and syncs it too. Recovery
// is unchanged: it takes the higher of the mark and the synced offsets
// the batches carry.

// markDelay is how long after a fdatasync the mark follows, at most. It
// bounds what recovery can tell about a damaged batch header: the mark
// says where the synced bytes end, and without it a damaged header hides
// the batches after it, whose own headers would have said so. Damage
// there within markDelay of a crash is cut as a torn write; before that
// it is refused (ErrCorrupt). At 10 ms, with commit rounds of 0.5–1 ms, one
// fdatasync in ten or more writes the mark's block.
const markDelay = 10 * time.Millisecond

// markLater arranges for the mark to follow the synced offset, which a
// fdatasync just advanced (wmu held).
func (l *Log) markLater() {
	if l.closed || len(l.segs) == 0 {
		return
	}
	if now := time.Now(); now.Sub(l.markedAt) >= markDelay {
		l.markedAt = now
		l.writeMark(l.segs[len(l.segs)-1])
	}
	if l.markArmed {
		return
	}
	l.markArmed = true
	l.markAppends = l.appends
	if l.markTimer == nil {
		l.markTimer = time.AfterFunc(markDelay, l.markQuiet)
		return
	}
	l.markTimer.Reset(markDelay)
}

// markQuiet writes the active segment's mark; when nothing was appended
// since markLater, it also syncs it (the timer's goroutine).
func (l *Log) markQuiet() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.markArmed = false
	if l.closed || len(l.segs) == 0 {
		return
	}
	s := l.segs[len(l.segs)-1]
	if s.ver != v2 {
		return
	}
	l.markedAt = time.Now()
	l.writeMark(s)
	if s.markSynced >= s.mark {
		return
	}
	if l.appends != l.markAppends || s.synced < s.size {
		// Appends go on, or one awaits its sync: a later fdatasync
		// carries the mark; look again then.
		l.markLater()
		return
	}
	if err := l.sync(s.f); err == nil {
		s.markSynced = s.mark
	}
}

// stopMark stops the mark's timer (Close, wmu held).
func (l *Log) stopMark() {
	if l.markTimer != nil {
		l.markTimer.Stop()
	}
	l.markArmed = false
}
