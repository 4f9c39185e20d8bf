package node

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// logGuard is the raft.LogStore raft is given: the chosen store (node/wal
// or raft-boltdb) behind a cache of recent entries, plus what a failing
// disk needs.
//
// Raft (v1.8) treats a failed append differently by role. A follower
// fails the AppendEntries RPC and the leader retries it later, with a
// backoff that grows to about 40 s. A leader answers the batch's futures
// with the error and steps down. If no other node can lead (a single
// node, or every other voter down or failing too), it wins the next
// election, fails its first append again, and steps down again: the term
// climbs and nothing is served. So:
//
//   - every failure is recorded as the node's log fault, which refuses new
//     writes at once (MISCONF: diskfault.go) and shows in INFO; it clears
//     when an append succeeds;
//   - a leader whose failed batch another node could take over returns
//     the error: raft steps down, and the batch's writes get MISCONF (the
//     batch reached no log, so it certainly did not apply);
//   - a leader that no other node can replace holds the failed batch and
//     retries it every logRetry, while it stays leader, keeps serving
//     reads, and refuses other writes. The batch's writes are answered
//     once it is stored (then applied) or the node closes; a later
//     chance to hand off (another voter reports a healthy log) ends the
//     hold with the error.
//
// The failed batch never stays half-written: the stores cut it (node/wal)
// or roll it back (bolt transactions) before returning the error, so a
// retry starts from the same log.
//
// Prefix deletions (raft's compaction after a snapshot) keep every entry
// after the older retained snapshot (snapshots.go), so that snapshot
// stays a usable fallback.
type logGuard struct {
	base raft.LogStore
	log  hclog.Logger
	// hold reports whether a failed append must be held and retried
	// rather than returned; keepAfter the index after which every entry
	// must stay. Both are set before raft starts.
	hold      func() bool
	keepAfter func() uint64
	stop      chan struct{}

	// fault is set while appends fail, syncFault while the periodic sync
	// (everysec) fails.
	fault, syncFault atomic.Pointer[logFault]
	// heldRetries counts the retries of held appends.
	heldRetries atomic.Uint64

	cmu   sync.RWMutex
	cache []*raft.Log
}

// logFault is a failing log store: the last error and since when.
type logFault struct {
	err   *LogWriteError
	since time.Time
}

// logRetry is how often a held append is tried again.
const logRetry = time.Second

var (
	_ raft.LogStore          = (*logGuard)(nil)
	_ raft.MonotonicLogStore = (*logGuard)(nil)
)

func newLogGuard(base raft.LogStore, cacheSize int, log hclog.Logger) *logGuard {
	return &logGuard{
		base: base, log: log, stop: make(chan struct{}), cache: make([]*raft.Log, cacheSize),
		hold: func() bool { return false }, keepAfter: func() uint64 { return 0 },
	}
}

// IsMonotonic passes on the store's nature: raft empties a monotonic
// store before installing a snapshot.
func (g *logGuard) IsMonotonic() bool {
	m, ok := g.base.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// StoreLog appends one entry.
func (g *logGuard) StoreLog(l *raft.Log) error { return g.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends a batch; see the type's documentation for failures.
func (g *logGuard) StoreLogs(logs []*raft.Log) error {
	err := g.base.StoreLogs(logs)
	for err != nil {
		werr := g.failed(err)
		if !g.hold() {
			return werr
		}
		select {
		case <-g.stop:
			return werr
		case <-time.After(logRetry):
		}
		g.heldRetries.Add(1)
		err = g.base.StoreLogs(logs)
	}
	g.recovered()
	g.cmu.Lock()
	for _, l := range logs {
		g.cache[l.Index%uint64(len(g.cache))] = l
	}
	g.cmu.Unlock()
	return nil
}

// failed records a failed append: logged when the fault starts or its
// error changes, not on every retry.
func (g *logGuard) failed(err error) *LogWriteError {
	return g.record(&g.fault, err, "writing the Raft log failed: writes are refused (MISCONF) until it works again")
}

func (g *logGuard) recovered() {
	g.clear(&g.fault, "the Raft log is written again: writes are accepted")
}

// syncFailed records a failed periodic sync (everysec): what was
// acknowledged may not be on disk, so writes are refused until a sync
// succeeds (syncRecovered).
func (g *logGuard) syncFailed(err error) {
	g.record(&g.syncFault, err, "syncing the Raft log failed: writes are refused (MISCONF) until a sync succeeds")
}

func (g *logGuard) syncRecovered() {
	g.clear(&g.syncFault, "the Raft log is synced again: writes are accepted")
}

func (g *logGuard) record(p *atomic.Pointer[logFault], err error, msg string) *LogWriteError {
	werr := &LogWriteError{Err: err}
	old := p.Load()
	f := &logFault{err: werr, since: time.Now()}
	if old != nil {
		f.since = old.since
	}
	p.Store(f)
	if old == nil || old.err.Error() != werr.Error() {
		g.log.Error(msg, "error", err)
	}
	return werr
}

func (g *logGuard) clear(p *atomic.Pointer[logFault], msg string) {
	if f := p.Swap(nil); f != nil {
		g.log.Info(msg, "after", time.Since(f.since).Round(time.Millisecond))
	}
}

// current returns the log fault (a failing append first, then a failing
// sync), or nil when the log works.
func (g *logGuard) current() *logFault {
	if f := g.fault.Load(); f != nil {
		return f
	}
	return g.syncFault.Load()
}

// GetLog reads from the cache, then the store.
func (g *logGuard) GetLog(idx uint64, l *raft.Log) error {
	g.cmu.RLock()
	c := g.cache[idx%uint64(len(g.cache))]
	g.cmu.RUnlock()
	if c != nil && c.Index == idx {
		*l = *c
		return nil
	}
	return g.base.GetLog(idx, l)
}

func (g *logGuard) FirstIndex() (uint64, error) { return g.base.FirstIndex() }
func (g *logGuard) LastIndex() (uint64, error)  { return g.base.LastIndex() }

// DeleteRange deletes entries min through max, keeping what the older
// retained snapshot needs when it is a prefix that leaves entries.
func (g *logGuard) DeleteRange(min, max uint64) error {
	last, err := g.base.LastIndex()
	if err != nil {
		return fmt.Errorf("node: deleting log entries: %w", err)
	}
	if max < last {
		if keep := g.keepAfter(); max > keep {
			g.log.Debug("keeping the log an older snapshot needs", "compact-to", max, "kept-after", keep)
			max = keep
		}
		if max < min {
			return nil
		}
	}
	g.cmu.Lock()
	clear(g.cache)
	g.cmu.Unlock()
	return g.base.DeleteRange(min, max)
}

// close ends any held append (with its error).
func (g *logGuard) close() {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
}
