package node

import (
	"sync"

	"github.com/hashicorp/raft"
)

// Group commit: the entries clients propose while a batch of entries is
// being written, fsynced, committed and applied are held here, and handed
// to Raft together once that batch is applied.
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
//
// A node with nothing in flight hands an entry over at once, so one client
// with one command in flight waits for nothing more than before. Order is
// kept: entries reach Raft in the order they were submitted, whether at
// once or from the queue. Only the leader submits (followers forward to
// it), and every entry still carries its own term fence and proposal ID.
type groupCommit struct {
	raft *raft.Raft
	stop <-chan struct{}

	mu sync.Mutex
	// inflight is the batch handed to Raft and not yet answered; empty
	// when nothing is in flight. queue is what waits for the next batch.
	inflight []*groupFuture
	queue    []*groupFuture
	// kick tells the flusher that a batch was handed to Raft.
	kick chan struct{}
	// ended: the flusher has stopped, and no future would be answered.
	ended bool

	// Batches handed to Raft, the entries in them, the largest.
	batches, entries uint64
	largest          int
}

func newGroupCommit(r *raft.Raft, stop <-chan struct{}) *groupCommit {
	return &groupCommit{raft: r, stop: stop, kick: make(chan struct{}, 1)}
}

// submit hands data to Raft now, or with the next batch once the one in
// flight is answered. The future answers as raft.Apply's would.
func (g *groupCommit) submit(data []byte) raft.ApplyFuture {
	f := &groupFuture{data: data, done: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		f.err = raft.ErrRaftShutdown
		close(f.done)
		return f
	}
	if len(g.inflight) == 0 && len(g.queue) == 0 {
		g.handOver([]*groupFuture{f})
		select {
		case g.kick <- struct{}{}:
		default:
		}
		return f
	}
	g.queue = append(g.queue, f)
	return f
}

// handOver gives batch to Raft, in order, as the batch in flight.
func (g *groupCommit) handOver(batch []*groupFuture) {
	for _, f := range batch {
		f.raft = g.raft.Apply(f.data, enqueueTimeout)
		f.data = nil
	}
	g.inflight = batch
	g.batches++
	g.entries += uint64(len(batch))
	g.largest = max(g.largest, len(batch))
}

// run is the flusher, the only reader of the Raft futures (they are not
// safe for more than one): it answers the batch in flight entry by entry
// as Raft answers them, then hands over what was held meanwhile.
func (g *groupCommit) run() {
	for {
		select {
		case <-g.kick:
		case <-g.stop:
			g.mu.Lock()
			if len(g.inflight) == 0 && len(g.queue) > 0 {
				g.handOver(g.queue)
				g.queue = nil
			}
			g.mu.Unlock()
		}
		for {
			g.mu.Lock()
			batch := g.inflight
			g.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			// Raft answers every future: applied, refused, or shut down.
			for _, f := range batch {
				f.answer()
			}
			g.mu.Lock()
			g.inflight = nil
			if len(g.queue) > 0 {
				g.handOver(g.queue)
				g.queue = nil
			}
			g.mu.Unlock()
		}
		select {
		case <-g.stop:
			g.mu.Lock()
			idle := len(g.inflight) == 0 && len(g.queue) == 0
			g.ended = idle
			g.mu.Unlock()
			if idle {
				return
			}
		default:
		}
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

// groupFuture is an entry's future: answered by the flusher with what
// Raft answered.
type groupFuture struct {
	data []byte
	raft raft.ApplyFuture
	done chan struct{}

	err   error
	resp  interface{}
	index uint64
}

var _ raft.ApplyFuture = (*groupFuture)(nil)

func (f *groupFuture) answer() {
	f.err = f.raft.Error()
	if f.err == nil {
		f.resp, f.index = f.raft.Response(), f.raft.Index()
	}
	close(f.done)
}

func (f *groupFuture) Error() error {
	<-f.done
	return f.err
}

func (f *groupFuture) Response() interface{} {
	<-f.done
	return f.resp
}

func (f *groupFuture) Index() uint64 {
	<-f.done
	return f.index
}
