package wal

import "time"

// When the sync mark is written.
//
// The mark (format.go) lives in the segment's header, one block away from
// the batches, so a mark rewritten after every fdatasync makes the next
// fdatasync write two blocks instead of one: measured on a 2-CPU VM's
// virtual disk, 0.30 ms against 0.21 ms a fdatasync with three logs
// syncing at once, and the followers' fdatasync is most of a 3-node
// cluster's commit round. The batches need little of the mark while
// appends go on: each batch header records the synced offset as it was
// when the batch was written, so a synced batch is known synced from the
// batches after it, which reach the disk with the same fdatasyncs a mark
// would have ridden on (markDelay tells what only the mark can tell).
//
// So the mark follows a fdatasync that advanced the synced offset at once
// only when it was last written markDelay ago or longer (a log synced
// once a second, everysec, marks after every fdatasync); otherwise a
// timer writes it markDelay later. Either way it costs no fdatasync of
// its own: it reaches the disk with the segment's next fdatasync, or at
// Close. Recovery is unchanged: it takes the higher of the mark and the
// synced offsets the batches carry.

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
	if time.Since(l.markedAt) >= markDelay {
		l.markActive()
		return
	}
	if l.markArmed {
		return
	}
	l.markArmed = true
	if l.markTimer == nil {
		l.markTimer = time.AfterFunc(markDelay, l.markNow)
		return
	}
	l.markTimer.Reset(markDelay)
}

// markNow writes the active segment's mark (the timer's goroutine).
func (l *Log) markNow() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.markArmed = false
	l.markActive()
}

// markActive writes the active segment's mark now, unless the log is
// closed (wmu held).
func (l *Log) markActive() {
	if l.closed || len(l.segs) == 0 {
		return
	}
	l.markedAt = time.Now()
	l.writeMark(l.segs[len(l.segs)-1])
}

// stopMark stops the mark's timer (Close, wmu held).
func (l *Log) stopMark() {
	if l.markTimer != nil {
		l.markTimer.Stop()
	}
	l.markArmed = false
}
