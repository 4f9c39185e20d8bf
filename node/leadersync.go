package node

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/node/wal"
)

// leaderSync lets a cluster leader fdatasync its own log while the
// followers store the same entries, instead of before it sends them.
//
// Raft's leader (hashicorp/raft) appends a batch to its log, and only once
// the append returns does it send the batch to the followers, who append
// and fdatasync it in turn: with --fsync always a write waited for two
// fdatasyncs one after the other. Here the leader's append returns once
// the batch is written, and a goroutine fdatasyncs it meanwhile, so the
// two fdatasyncs overlap.
//
// Raft then counts the leader's copy before it is durable: its commit
// index may cover an entry only one follower holds on stable storage.
// Nothing is let out before the leader's copy is durable too, so what
// anyone sees is still on a majority's stable storage:
//
//   - the state machine applies an entry only once this node's log holds
//     it durably (raftfsm.FSM.BeforeApply, wait), so a write is answered,
//     and read, only then;
//   - the commit index the leader sends its followers is capped at its
//     durable index (capTransport), so a follower applies only entries
//     the leader holds durably too;
//   - the leader's read index is capped the same way (ReadIndex);
//   - a membership change reports success only once its entry is durable
//     here (membership.go).
//
// Only the leader's own appends are deferred: Raft makes them on its
// main goroutine in the Leader state, the one that also changes the
// state, so an append made in that state is the leader's. A follower's
// append is fsynced before it answers, as Raft requires. A failing
// deferred fdatasync is a log fault (writes are refused with MISCONF),
// retried every logRetry; the durable index advances only once one
// succeeds.
type leaderSync struct {
	*wal.Log
	// raft is what l needs of Raft, set once it runs.
	raft  atomic.Pointer[raftHooks]
	guard *logGuard
	stop  chan struct{}
	kick  chan struct{}
	done  chan struct{}
	// quit frees the waits (release).
	quit     chan struct{}
	quitOnce sync.Once

	// durable: every entry up to it, as the log holds it now, is on
	// stable storage. mu orders it with gen, which counts deletions of
	// the log's end (a later entry at the same index is another entry).
	durable atomic.Uint64
	mu      sync.Mutex
	gen     uint64
	changed chan struct{} // closed when durable advances (under mu)
}

var _ raft.MonotonicLogStore = (*leaderSync)(nil)

// newLeaderSync wraps w, syncing whatever it holds first: entries a
// process that ended before its deferred sync left in the kernel.
func newLeaderSync(w *wal.Log) (*leaderSync, error) {
	if err := w.Sync(); err != nil {
		return nil, err
	}
	last, err := w.LastIndex()
	if err != nil {
		return nil, err
	}
	l := &leaderSync{Log: w, stop: make(chan struct{}), kick: make(chan struct{}, 1), done: make(chan struct{}), quit: make(chan struct{}), changed: make(chan struct{})}
	l.durable.Store(last)
	go l.run()
	return l, nil
}

// raftHooks: leading reports whether Raft leads (its appends are then
// the leader's own); onFault is called, on its own goroutine, when a
// deferred sync starts failing (a leader hands leadership over).
type raftHooks struct {
	leading func() bool
	onFault func()
}

// setRaft gives l what it needs of Raft once Raft runs.
func (l *leaderSync) setRaft(leading func() bool, onFault func()) {
	l.raft.Store(&raftHooks{leading: leading, onFault: onFault})
}

func (l *leaderSync) isLeading() bool {
	h := l.raft.Load()
	return h != nil && h.leading()
}

func (l *leaderSync) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs writes the leader's appends and has them synced in the
// background; any other append is synced before it returns.
func (l *leaderSync) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	if l.isLeading() {
		if err := l.Log.StoreLogsDeferred(logs); err != nil {
			return err
		}
		select {
		case l.kick <- struct{}{}:
		default:
		}
		return nil
	}
	if err := l.Log.StoreLogs(logs); err != nil {
		return err
	}
	// The fdatasync covered everything written before it too.
	l.mu.Lock()
	l.advanceLocked(logs[len(logs)-1].Index)
	l.mu.Unlock()
	l.synced()
	return nil
}

// DeleteRange deletes entries; when it cuts the log's end, what was
// durable there is no longer.
func (l *leaderSync) DeleteRange(min, max uint64) error {
	last, err := l.Log.LastIndex()
	if err != nil {
		return err
	}
	if max < last {
		return l.Log.DeleteRange(min, max)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
	if min > 0 && l.durable.Load() >= min {
		l.durable.Store(min - 1)
	}
	return l.Log.DeleteRange(min, max)
}

func (l *leaderSync) advanceLocked(index uint64) {
	if index <= l.durable.Load() {
		return
	}
	l.durable.Store(index)
	close(l.changed)
	l.changed = make(chan struct{})
}

// run syncs the deferred appends, one fdatasync for all that wait.
func (l *leaderSync) run() {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-l.kick:
		}
		for !l.syncOnce() {
			select {
			case <-l.stop:
				return
			case <-time.After(logRetry):
			}
		}
	}
}

// syncOnce syncs what is written and advances the durable index; false
// when the fdatasync failed.
func (l *leaderSync) syncOnce() bool {
	l.mu.Lock()
	gen := l.gen
	last, _ := l.Log.LastIndex()
	l.mu.Unlock()
	if last <= l.durable.Load() {
		l.synced()
		return true
	}
	if err := l.Log.Sync(); err != nil {
		first := l.guard != nil && l.guard.syncFault.Load() == nil
		if l.guard != nil {
			l.guard.syncFailed(err)
		}
		if h := l.raft.Load(); first && h != nil {
			go h.onFault()
		}
		return false
	}
	l.synced()
	l.mu.Lock()
	if l.gen == gen {
		l.advanceLocked(last)
	}
	l.mu.Unlock()
	return true
}

// synced ends a sync fault: an fdatasync of the log succeeded.
func (l *leaderSync) synced() {
	if l.guard != nil && l.guard.syncFault.Load() != nil {
		l.guard.syncRecovered()
	}
}

// wait returns once the log holds index durably, or l is released (the
// node closes: see release).
func (l *leaderSync) wait(index uint64) { l.waitUntil(index, nil) }

// waitFor is wait for at most d; false if index is not durable by then.
func (l *leaderSync) waitFor(index uint64, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	return l.waitUntil(index, t.C)
}

func (l *leaderSync) waitUntil(index uint64, timeout <-chan time.Time) bool {
	for l.durable.Load() < index {
		l.mu.Lock()
		ch := l.changed
		ok := l.durable.Load() >= index
		l.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-timeout:
			return false
		case <-l.quit:
			return false
		}
	}
	return true
}

// capIndex caps a commit or read index at the durable index.
func (l *leaderSync) capIndex(index uint64) uint64 {
	return min(index, l.durable.Load())
}

// release syncs what is written, once more, and frees every wait, so
// that Raft's state machine goroutine, waiting in wait, lets Raft shut
// down. Only a closing node releases: should that last sync fail too,
// the entries it waited for are applied here (a majority committed them;
// this node's copy may not be durable).
func (l *leaderSync) release() {
	l.syncOnce()
	l.quitOnce.Do(func() { close(l.quit) })
}

// close stops the background sync (the log's Close syncs what is left).
func (l *leaderSync) close() {
	l.release()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// capTransport is the leader's Raft transport with the commit index it
// sends capped at its durable index (leaderSync).
type capTransport struct {
	raft.Transport
	ls *leaderSync
}

func (t *capTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	args.LeaderCommitIndex = t.ls.capIndex(args.LeaderCommitIndex)
	return t.Transport.AppendEntries(id, target, args, resp)
}

// AppendEntriesPipeline is refused: every append goes through
// AppendEntries, capped.
func (t *capTransport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// RequestPreVote passes pre-vote on (raft.WithPreVote).
func (t *capTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.Transport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

// Close closes the transport when it can be (raft.WithClose).
func (t *capTransport) Close() error {
	if c, ok := t.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}
