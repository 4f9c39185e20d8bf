package resp

import (
	"sync"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

// WAIT numreplicas timeout.
//
// Redis answers how many replicas acknowledged the connection's writes,
// blocking until numreplicas did or timeout (milliseconds, 0: forever)
// passed. Goblin counts the other nodes known to hold the connection's
// last write (ReplicaBackend): an acknowledged write is committed, so at
// least a majority of the voters hold it at once, and every node learns
// from the others' progress reports which of them do. The blocked WAITs
// are counted again every waitPoll, all from one look at what the node
// knows (waitQueue); a WAIT ends as Redis's does: the count reached,
// the timeout, CLIENT UNBLOCK (TIMEOUT: the count then; ERROR), the
// client gone, or the server closing. Inside a transaction it never
// blocks. Unlike Redis, a follower answers it too: clients write through
// followers.

// ReplicaBackend is what WAIT needs from the backend (*node.Node has
// it); a backend without it has no replicas.
type ReplicaBackend interface {
	Replicas() node.Replicas
}

// waitPoll is how often the blocked WAITs are counted again.
const waitPoll = 10 * time.Millisecond

func cmdWait(c *client, argv [][]byte) {
	want, ok := command.ParseInt(argv[1])
	if !ok {
		c.replyError(command.ErrNotInteger)
		return
	}
	timeout, err := command.ParseTimeoutMillis(argv[2], c.s.backend.Now())
	if err != nil {
		c.replyError(err)
		return
	}
	acks, ok := c.awaitAcks(timeout, func(r node.Replicas, index uint64) ([2]int, bool) {
		have := r.Holding(index)
		return [2]int{have}, int64(have) >= want
	})
	if ok {
		c.reply(func(w *command.Writer) { w.Int(int64(acks[0])) })
	}
}

// ackCount counts what a WAIT or WAITAOF waits for, from what the node
// knows of its replicas, for the connection's last write (index), and
// tells whether that is enough.
type ackCount func(r node.Replicas, index uint64) (acks [2]int, enough bool)

// awaitAcks blocks the client until count is enough for its last write,
// or until the timeout (the counts then), as WAIT and WAITAOF do. ok is
// false when the client is not to be answered (gone, the server closing)
// or was answered with an error (CLIENT UNBLOCK ... ERROR).
func (c *client) awaitAcks(timeout int64, count ackCount) (acks [2]int, ok bool) {
	if c.capture == nil {
		// The writes pipelined before it count: they are answered first.
		// (Inside EXEC the transaction's entry was answered already.)
		c.drain()
	}
	index := c.written
	acks, enough := count(c.s.replicas(), index)
	if enough || c.capture != nil {
		return acks, true
	}
	// The replies before this command leave now, as Redis sends them
	// before a client blocks.
	c.flushOut()
	w := c.s.blocked.add(c.id, c.db, nil)
	defer c.s.blocked.remove(w)
	req := &waitRequest{index: index, count: count, done: make(chan [2]int, 1)}
	c.s.waits.add(c.s, req)
	defer c.s.waits.remove(req)
	expired, stop := expiry(timeout)
	defer stop()
	var gone <-chan struct{}
	if fc, ok := c.conn.NetConn().(*framedConn); ok {
		gone = fc.fr.WatchClose()
		defer fc.fr.StopWatch()
	}
	select {
	case acks = <-req.done:
	case <-expired:
		acks, _ = count(c.s.replicas(), index)
	case withError := <-w.unblock:
		if withError {
			c.replyError(errUnblocked)
			return acks, false
		}
		acks, _ = count(c.s.replicas(), index)
	case <-gone:
		return acks, false
	case <-c.s.closing:
		return acks, false
	}
	return acks, true
}

// replicas is what the node knows of its replicas now.
func (s *Server) replicas() node.Replicas {
	if rb, ok := s.backend.(ReplicaBackend); ok {
		return rb.Replicas()
	}
	return node.Replicas{}
}

// waitRequest is a blocked WAIT or WAITAOF: done receives the counts
// once they are enough.
type waitRequest struct {
	index uint64
	count ackCount
	done  chan [2]int
}

// waitQueue holds the blocked WAITs and WAITAOFs. One goroutine, running while any
// waits, takes what the node knows of its replicas every waitPoll and
// answers the requests whose count is reached: one look a poll however
// many clients wait.
type waitQueue struct {
	mu      sync.Mutex
	waiting map[*waitRequest]struct{}
	running bool
}

func (q *waitQueue) add(s *Server, r *waitRequest) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting == nil {
		q.waiting = map[*waitRequest]struct{}{}
	}
	q.waiting[r] = struct{}{}
	if !q.running {
		q.running = true
		go q.poll(s)
	}
}

func (q *waitQueue) remove(r *waitRequest) {
	q.mu.Lock()
	delete(q.waiting, r)
	q.mu.Unlock()
}

// poll answers the requests whose count is reached, every waitPoll, until
// none waits or the server closes.
func (q *waitQueue) poll(s *Server) {
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.closing:
			q.mu.Lock()
			q.running = false
			q.mu.Unlock()
			return
		}
		reps := s.replicas()
		q.mu.Lock()
		for r := range q.waiting {
			if acks, enough := r.count(reps, r.index); enough {
				r.done <- acks
				delete(q.waiting, r)
			}
		}
		if len(q.waiting) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}
