package node

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/hist"
	"github.com/goblindb/goblin/internal/yield"
	"github.com/goblindb/goblin/raftfsm"
)

// Group commit: the entries proposed while a batch is being written,
// fsynced, committed and applied are held here, and handed to Raft
// together once the state machine has applied a batch.
//
// Raft's leader takes whatever waits in its queue, appends it to the log
// with one write and one fdatasync, and goes back for more. Handed over
// one by one as clients send them, entries reach it a few at a time: with
// 50 clients each waiting for its reply, a fdatasync covered about six
// entries, and the node spent its time on fdatasyncs and on waking
// goroutines for each small batch. Held while a batch is in flight, the
// entries that arrive meanwhile reach Raft as one batch, the way Redis's
// event loop writes and fsyncs the commands of all ready clients at once:
// one fdatasync, one AppendEntries round and one apply for all of them.
// The batch is one Raft log entry, a group of its entries
// (raftfsm/group.go), so Raft's own cost per entry is paid once a batch,
// once every server applies groups (the group gate, groupgate.go).
//
// With nothing in flight an entry is handed over at once, by its
// proposer, and its proposer alone reads Raft's future (they are not safe
// for two readers): one client with one command in flight waits for
// nothing more than before. Held entries are handed over by the flusher
// goroutine when the state machine reports an applied batch (an apply
// callback, so nothing reads a future twice), when leadership changes, or
// after holdLimit at the latest, so nothing is held for long whatever
// became of the batch in flight. Order is kept: entries reach Raft in the
// order they were submitted. Only a leader submits (followers forward to
// it), and every entry keeps its own term fence and proposal ID.
type groupCommit struct {
	raft raftApplier
	stop <-chan struct{}

	// busy: a batch was handed to Raft since the last applied batch. Set
	// under mu; cleared without it by the state machine's callback, which
	// must never wait for a lock held while Raft's queue is full.
	busy atomic.Bool
	// held is len(queue), for that callback.
	held atomic.Int64
	// handed: when the batch in flight was handed to Raft (Unix
	// nanoseconds); rounds: how long batches took from then until the
	// state machine reported them applied (the commit round).
	handed atomic.Int64
	rounds hist.Histogram

	mu sync.Mutex
	// queue is what waits for the next batch; ready is closed once it is
	// handed to Raft (one channel for every entry of the batch).
	queue []*heldFuture
	ready chan struct{}
	// kick wakes the flusher: something was queued, a batch applied, or
	// leadership changed.
	kick chan struct{}
	// ended: the flusher has stopped; a held entry would never be handed.
	ended bool
	// off: every entry is handed over at once (Config.noGroupCommit).
	off bool
	// oneThread: one thread runs Go code (GOMAXPROCS 1) when the node
	// starts: see submitYielding.
	oneThread bool
	// holding counts the callers of together under way: entries submitted
	// meanwhile are held, even with nothing in flight, and handed over
	// when the last one ends.
	holding int
	// grouped: a batch may go to Raft as one group entry (the group gate,
	// groupgate.go); otherwise its entries go one by one.
	grouped atomic.Bool

	// fmu guards inflight, the groups handed to Raft and not yet
	// answered, by their first byte (groupApplied). It is never held
	// while waiting for Raft.
	fmu      sync.Mutex
	inflight map[*byte]*groupFuture

	// Batches handed to Raft, the entries in them, the largest.
	batches, entries uint64
	largest          int
	// overdue counts the batches handed over at holdLimit, a batch still
	// in flight: a disk that slow, or an applied batch not reported.
	overdue atomic.Uint64
}

// raftApplier is what group commit needs of Raft: *raft.Raft.
type raftApplier interface {
	Apply(cmd []byte, timeout time.Duration) raft.ApplyFuture
}

// holdLimit bounds how long entries are held for one batch in flight.
const holdLimit = 100 * time.Millisecond

// newGroupCommit makes the group commit of a node; its raft is set once
// Raft runs, before anything is submitted (the state machine may call
// applied before).
func newGroupCommit(stop <-chan struct{}) *groupCommit {
	return &groupCommit{stop: stop, kick: make(chan struct{}, 1), inflight: map[*byte]*groupFuture{},
		oneThread: runtime.GOMAXPROCS(0) == 1}
}

// submit hands data to Raft now, or with the next batch. The future
// answers as raft.Apply's would, to one reader.
func (g *groupCommit) submit(data []byte) raft.ApplyFuture {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return raft.ApplyFuture(errorFuture{raft.ErrRaftShutdown})
	}
	if g.off || (g.holding == 0 && !g.busy.Load() && len(g.queue) == 0) {
		if g.oneThread && !g.off {
			return g.submitYielding(data)
		}
		g.count(1)
		g.fly()
		// Nothing is in flight here, unless group commit is off: then
		// every entry goes at once, and Raft's queue may be full.
		return g.raft.Apply(data, enqueueWait(!g.off, 0))
	}
	return g.hold(data, true)
}

// submitYielding is submit with nothing in flight on one thread (g.mu
// held): data is held while the goroutines that can run do, then handed
// over with what they submitted meanwhile.
//
// With one thread running Go code, the goroutines of the clients whose
// requests one poll of the network found wait in the thread's run queue
// while one of them submits. Raft's leader goroutine, which the hand-over
// wakes, runs next, ahead of them, and holds the thread in the log's
// fdatasync: each batch was one or two entries (measured: 24,209
// fdatasyncs for 40,000 ZADDs from 50 clients), and one thread ran a
// quarter of the writes two did. Yielding first lets the others submit;
// the last to return hands over all of them as one batch. Alone, the
// entry waits for two yields.
func (g *groupCommit) submitYielding(data []byte) raft.ApplyFuture {
	// The flusher is not woken: together hands the batch over, and a lone
	// client would pay the flusher's wake-up and timer on every write.
	// Until together holds, the entry queued makes others hold theirs.
	h := g.hold(data, false)
	g.mu.Unlock()
	g.together(func() { yield.WhileGrowing(func() int { return int(g.held.Load()) }, 0, maxYields) })
	g.mu.Lock()
	return h
}

// maxYields bounds the yields of submitYielding: goroutines that keep
// submitting do not hold the first entry back for long.
const maxYields = 64

// hold queues data for the next batch (g.mu held), waking the flusher
// for the first entry queued when wake is set.
func (g *groupCommit) hold(data []byte, wake bool) raft.ApplyFuture {
	if len(g.queue) == 0 {
		g.ready = make(chan struct{})
	}
	h := &heldFuture{data: data, ready: g.ready}
	g.queue = append(g.queue, h)
	g.held.Store(int64(len(g.queue)))
	if len(g.queue) == 1 && wake {
		g.wake()
	}
	return h
}

// together runs fn, whose submits are held and handed to Raft as one
// batch once it returns (or, with a batch in flight, once that one is
// applied): a caller that proposes for many clients at once (resp's
// event loop) makes one batch of them, where submitting them one by one
// would send the first alone. Should fn wait for one of them, they are
// handed over at holdLimit all the same.
func (g *groupCommit) together(fn func()) {
	g.mu.Lock()
	g.holding++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.holding--
		if g.holding == 0 && len(g.queue) > 0 && !g.busy.Load() && !g.ended {
			g.handOver()
		}
	}()
	fn()
}

// applied is the state machine's callback after each applied batch (on
// its goroutine: it only signals, and takes no lock).
func (g *groupCommit) applied() {
	if g.busy.Swap(false) {
		g.rounds.Record(time.Duration(time.Now().UnixNano() - g.handed.Load()))
	}
	if g.held.Load() > 0 {
		g.wake()
	}
}

// leadershipChanged frees what is held: the batch in flight may never be
// applied here. Nor can a group in flight be found by groupApplied any
// more (a node that is not the leader applies entries read back from its
// log): Raft's future answers its members, and it is forgotten here, so
// that a group whose members never ask is not kept.
func (g *groupCommit) leadershipChanged() {
	g.fmu.Lock()
	clear(g.inflight)
	g.fmu.Unlock()
	g.busy.Store(false) // not applied here: no commit round to measure
	g.applied()
}

// fly marks a batch in flight from now.
func (g *groupCommit) fly() {
	g.handed.Store(time.Now().UnixNano())
	g.busy.Store(true)
}

func (g *groupCommit) wake() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (g *groupCommit) count(n int) {
	g.batches++
	g.entries += uint64(n)
	g.largest = max(g.largest, n)
}

// run is the flusher: it hands the held entries to Raft as one batch
// whenever nothing is in flight, or they have waited holdLimit.
func (g *groupCommit) run() {
	timer := time.NewTimer(holdLimit)
	defer timer.Stop()
	// since: when the flusher first saw the batch now held (batch, its
	// ready channel) waiting behind one in flight or a together. The batch
	// it saw may have gone to Raft since without it (at a together's
	// end): the one held now is timed from when it is seen.
	var since time.Time
	var batch chan struct{}
	for {
		select {
		case <-g.kick:
		case <-timer.C:
		case <-g.stop:
			g.mu.Lock()
			g.handOver()
			g.ended = true
			g.mu.Unlock()
			return
		}
		g.mu.Lock()
		switch {
		case len(g.queue) == 0:
			since = time.Time{}
		case !g.busy.Load() && g.holding == 0:
			g.handOver()
			since = time.Time{}
		case since.IsZero() || batch != g.ready:
			since, batch = time.Now(), g.ready
		case time.Since(since) >= holdLimit:
			g.overdue.Add(1)
			g.handOver()
			since = time.Time{}
		}
		if !since.IsZero() {
			timer.Reset(holdLimit - time.Since(since))
		}
		g.mu.Unlock()
	}
}

// handOver gives the held entries to Raft, in order, as one batch: as
// groups of entries (raftfsm/group.go), each one Raft log entry, of less
// than maxGroupBytes (an entry that size or larger goes alone), or one by
// one while the group gate is closed.
func (g *groupCommit) handOver() {
	if len(g.queue) == 0 {
		return
	}
	grouped := g.grouped.Load()
	idle := !g.busy.Load()
	for i, n := 0, 0; i < len(g.queue); n++ {
		j, size := i+1, len(g.queue[i].data)
		for grouped && j < len(g.queue) && size+len(g.queue[j].data) < maxGroupBytes() {
			size += len(g.queue[j].data)
			j++
		}
		// Busy before it reaches Raft, not after: the state machine may
		// apply it, and report so (applied), before applyHeld returns.
		g.fly()
		g.applyHeld(g.queue[i:j], enqueueWait(idle, n))
		i = j
	}
	close(g.ready)
	g.ready = nil
	g.count(len(g.queue))
	clear(g.queue)
	g.queue = g.queue[:0]
	g.held.Store(0)
}

// maxGroupBytes bounds the entries gathered into one group: a cluster's
// entry limit, so that the pieces of a split write (chunks.go), each of up
// to that size, go to Raft one a log entry.
func maxGroupBytes() int { return maxClusterEntryBytes }

// enqueueWait is how long the n'th entry (from 0) of a batch may wait to
// enter Raft's queue: without limit while the queue has room for certain,
// since then Raft makes no timer for it (a timer and a channel a write,
// when Raft's queue is free almost always); enqueueTimeout otherwise.
// With nothing group commit handed over in flight (idle: every batch
// applied, so taken from the queue), the queue holds at most the few
// entries proposed around group commit (a new leader's barrier and
// rules), and has maxAppendEntries places.
func enqueueWait(idle bool, n int) time.Duration {
	if idle && n < maxAppendEntries/4 {
		return 0
	}
	return enqueueTimeout
}

// applyHeld hands hs to Raft: one entry as it is, several as a group,
// waiting up to timeout (0: no limit) for a place in Raft's queue.
// Their futures answer once handOver closes the batch's ready channel.
func (g *groupCommit) applyHeld(hs []*heldFuture, timeout time.Duration) {
	if len(hs) == 1 {
		h := hs[0]
		h.f = g.raft.Apply(h.data, timeout)
		h.data = nil
		return
	}
	entries := make([][]byte, len(hs))
	for i, h := range hs {
		entries[i] = h.data
	}
	gf := &groupFuture{gc: g, done: make(chan struct{})}
	data := raftfsm.AppendGroup(make([]byte, 0, raftfsm.GroupLen(entries)), entries)
	g.track(gf, data)
	gf.f = g.raft.Apply(data, timeout)
	for i, h := range hs {
		h.g, h.i = gf, i
		h.data = nil
	}
}

// GroupCommitStats reports how many batches of entries this node handed
// to Raft as leader, how many entries they held, and the largest.
func (n *Node) GroupCommitStats() (batches, entries uint64, largest int) {
	g := n.group
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.batches, g.entries, g.largest
}

// heldFuture is a held entry's future. Once its batch is handed to Raft
// (ready closed) it answers as Raft's future of the entry handed over
// alone (f), or as the i'th member of a group (g): the group's error, or
// the member's own result.
type heldFuture struct {
	data  []byte
	ready chan struct{}
	f     raft.ApplyFuture
	g     *groupFuture
	i     int
}

var _ raft.ApplyFuture = (*heldFuture)(nil)

// wait returns once h is answered, with its group (nil for an entry
// handed over alone, answered by f).
func (h *heldFuture) wait() *groupFuture {
	<-h.ready
	if h.g != nil {
		h.g.wait()
	}
	return h.g
}

// answered reports whether h's group has been answered: handed to Raft
// and applied, or failed. An entry handed over alone is answered by
// Raft's future, which cannot say so without waiting: false.
func (h *heldFuture) answered() bool {
	select {
	case <-h.ready:
	default:
		return false
	}
	if h.g == nil {
		return false
	}
	select {
	case <-h.g.done:
		return true
	default:
		return false
	}
}

func (h *heldFuture) Error() error {
	if g := h.wait(); g != nil {
		return g.err
	}
	return h.f.Error()
}

func (h *heldFuture) Response() interface{} {
	if res, ok := h.result(); ok {
		return res
	}
	if h.g != nil {
		return h.g.resp
	}
	return h.f.Response()
}

// result is Response as a raftfsm.Result, read without boxing a group
// member's (the proposer's path, once a write): the member's own result,
// or the group's when the group failed as a whole (it could not be
// decoded).
func (h *heldFuture) result() (raftfsm.Result, bool) {
	g := h.wait()
	if g == nil {
		res, ok := h.f.Response().(raftfsm.Result)
		return res, ok
	}
	if rs, ok := g.resp.(raftfsm.GroupResult); ok && h.i < len(rs) {
		return rs[h.i], true
	}
	res, ok := g.resp.(raftfsm.Result)
	return res, ok
}

func (h *heldFuture) Index() uint64 {
	if g := h.wait(); g != nil {
		return g.index
	}
	return h.f.Index()
}

// groupFuture is the future of a group's log entry, which every member
// reads. The state machine answers it as it applies the group on this node
// (groupApplied), waking every member at once; one member also waits for
// Raft's future (which has one reader) for the answers of a group that is
// not applied here (leadership lost, shutdown). Whichever comes first
// answers.
type groupFuture struct {
	gc      *groupCommit
	f       raft.ApplyFuture
	key     *byte
	claimed atomic.Bool
	once    sync.Once
	done    chan struct{}
	err     error
	resp    interface{}
	index   uint64
}

// finish answers the group, once.
func (gf *groupFuture) finish(err error, resp interface{}, index uint64) {
	gf.once.Do(func() {
		gf.err, gf.resp, gf.index = err, resp, index
		close(gf.done)
	})
}

func (gf *groupFuture) wait() {
	select {
	case <-gf.done:
		// Answered by the state machine: Raft's future, which its
		// answer follows, need not be read.
		return
	default:
	}
	if gf.claimed.CompareAndSwap(false, true) {
		err := gf.f.Error()
		var resp interface{}
		var index uint64
		if err == nil {
			resp, index = gf.f.Response(), gf.f.Index()
		}
		gf.gc.forget(gf)
		gf.finish(err, resp, index)
	}
	<-gf.done
}

// track registers gf, whose group entry is data, for groupApplied.
func (g *groupCommit) track(gf *groupFuture, data []byte) {
	gf.key = &data[0]
	g.fmu.Lock()
	g.inflight[gf.key] = gf
	g.fmu.Unlock()
}

func (g *groupCommit) forget(gf *groupFuture) {
	g.fmu.Lock()
	if g.inflight[gf.key] == gf {
		delete(g.inflight, gf.key)
	}
	g.fmu.Unlock()
}

// groupApplied is the state machine's report of a group applied at index
// (raftfsm.FSM.OnGroup, on its goroutine, under the keyspace's lock): on
// the leader that wrote it, Raft hands the state machine the very bytes
// it was given, so the group is found by its first byte's address. Groups
// read back from the log (a follower, a restart) are found by no one.
func (g *groupCommit) groupApplied(data []byte, index uint64, res raftfsm.GroupResult) {
	if len(data) == 0 {
		return
	}
	g.fmu.Lock()
	gf := g.inflight[&data[0]]
	delete(g.inflight, &data[0])
	g.fmu.Unlock()
	if gf != nil {
		gf.finish(nil, res, index)
	}
}

// errorFuture answers err at once.
type errorFuture struct{ err error }

func (e errorFuture) Error() error          { return e.err }
func (e errorFuture) Response() interface{} { return nil }
func (e errorFuture) Index() uint64         { return 0 }
