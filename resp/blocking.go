package resp

import (
	"bytes"
	"container/list"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/raftfsm"
)

// Blocking pops (BZPOPMIN, BZPOPMAX, BZMPOP) outside a transaction.
//
// The state machine never blocks: there the command pops if it can and
// otherwise replies with a null array. A connection that gets that null
// array waits in the registry on the command's keys. When a write leaves
// one of those keys with members, the state machine's Ready hook wakes the
// first connection waiting on it (first blocked, first served), which
// proposes its command again: the pop it receives is decided by that one
// log entry, on every node alike. If the key was emptied again meanwhile
// the connection keeps its place and waits on. A connection that leaves
// the registry (served, timed out, disconnected) passes the turn to the
// next one waiting on each of its keys, so a set with members left wakes
// the next waiter.
//
// A waiting connection holds no lock; it watches its timeout, its socket
// (its Framer reads ahead to notice a disconnect) and server shutdown.

type blockKey struct {
	db  int
	key string
}

type waiter struct {
	id    int64         // the blocked connection's client ID
	wake  chan struct{} // buffered: a wake-up is never lost
	keys  []blockKey
	elems []*list.Element
	// unblock receives CLIENT UNBLOCK's reason: true for ERROR.
	unblock chan bool
}

type blockRegistry struct {
	mu     sync.Mutex
	queues map[blockKey]*list.List
	byID   map[int64]*waiter
	count  atomic.Int64 // connections blocked, for INFO
}

func (r *blockRegistry) add(id int64, db int, keys [][]byte) *waiter {
	w := &waiter{id: id, wake: make(chan struct{}, 1), unblock: make(chan bool, 1)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.queues == nil {
		r.queues = map[blockKey]*list.List{}
		r.byID = map[int64]*waiter{}
	}
	r.byID[id] = w
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		bk := blockKey{db, string(k)}
		q := r.queues[bk]
		if q == nil {
			q = list.New()
			r.queues[bk] = q
		}
		w.keys = append(w.keys, bk)
		w.elems = append(w.elems, q.PushBack(w))
	}
	r.count.Add(1)
	return w
}

// has reports whether client id is blocked (CLIENT LIST's flag b).
func (r *blockRegistry) has(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.byID[id]
	return ok
}

// keys returns how many keys clients are blocked on.
func (r *blockRegistry) keys() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queues)
}

// remove takes w out of every queue and wakes the next waiter of each.
func (r *blockRegistry) remove(w *waiter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, w.id)
	for i, bk := range w.keys {
		q := r.queues[bk]
		q.Remove(w.elems[i])
		if q.Len() == 0 {
			delete(r.queues, bk)
			continue
		}
		signal(q.Front().Value.(*waiter))
	}
	r.count.Add(-1)
}

// ready is the state machine's Ready hook: key in db has members. It runs
// under the keyspace lock, so it only signals.
func (r *blockRegistry) ready(db int, key []byte) {
	r.mu.Lock()
	if q := r.queues[blockKey{db, string(key)}]; q != nil {
		signal(q.Front().Value.(*waiter))
	}
	r.mu.Unlock()
}

// unblock ends client id's wait as CLIENT UNBLOCK asks: as a timeout, or
// with an error. It reports whether the client was blocked.
func (r *blockRegistry) unblock(id int64, withError bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.byID[id]
	if !ok {
		return false
	}
	select {
	case w.unblock <- withError:
	default: // already being unblocked
	}
	return true
}

// wakeAll wakes every waiter (after a snapshot is installed, when any key
// may have changed without a Ready call).
func (r *blockRegistry) wakeAll() {
	r.mu.Lock()
	for _, q := range r.queues {
		for e := q.Front(); e != nil; e = e.Next() {
			signal(e.Value.(*waiter))
		}
	}
	r.mu.Unlock()
}

func signal(w *waiter) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

var errUnblocked = command.Errorf("UNBLOCKED client unblocked via CLIENT UNBLOCK")

// cmdClientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR].
func cmdClientUnblock(c *client, argv [][]byte) {
	withError := false
	if len(argv) == 4 {
		switch strings.ToLower(string(argv[3])) {
		case "timeout":
		case "error":
			withError = true
		default:
			c.replyError(command.Errorf("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"))
			return
		}
	}
	id, ok := command.ParseInt(argv[2])
	if !ok {
		c.replyError(command.ErrNotInteger)
		return
	}
	n := int64(0)
	if c.s.blocked.unblock(id, withError) {
		n = 1
	}
	c.reply(func(w *command.Writer) { w.Int(n) })
}

// isNullArray reports whether a reply is the null array a blocking pop
// answers when it has nothing to pop.
func isNullArray(b []byte) bool {
	return bytes.Equal(b, []byte("*-1\r\n")) || bytes.Equal(b, []byte("_\r\n"))
}

// block runs a blocking pop for a connection outside a transaction.
func (c *client) block(spec *command.Spec, argv [][]byte) {
	c.drain()
	defer func() { c.barrier = false }() // time has passed: later reads need a new check
	if err := spec.Validate(argv); err != nil {
		c.replyError(err)
		return
	}
	timeoutArg := argv[len(argv)-1]
	if spec.Name == "bzmpop" {
		timeoutArg = argv[1]
	}
	timeout, err := command.ParseTimeout(timeoutArg, c.s.backend.Now())
	if err != nil {
		c.replyError(err)
		return
	}
	// Wait in line before the first attempt, so a write landing between
	// the attempt and the wait cannot be missed.
	w := c.s.blocked.add(c.id, c.db, keysOf(spec, argv))
	defer c.s.blocked.remove(w)
	expired, stop := expiry(timeout)
	defer stop()
	var gone <-chan struct{}
	fc, _ := c.conn.NetConn().(*framedConn)
	for attempt := 0; ; attempt++ {
		// Permissions are checked again each time the command runs
		// again, as Redis checks a command it unblocks.
		if attempt > 0 && !c.permitAgain(spec, argv) {
			return
		}
		e := c.entry(raftfsm.OpCommand, []raftfsm.Command{{DB: c.db, Argv: argv}})
		res, err := c.s.backend.Propose(&e)()
		c.wrote(res)
		if err != nil {
			c.replyError(translate(err))
			return
		}
		if !isNullArray(res.Reply) {
			c.noteReply(res.Reply)
			c.send(res.Reply)
			return
		}
		if gone == nil && fc != nil {
			// The replies before this command leave now, as Redis sends
			// them before a client blocks.
			c.flushOut()
			gone = fc.fr.WatchClose()
			defer fc.fr.StopWatch()
		}
		select {
		case <-w.wake:
		case <-expired:
			c.reply(func(w *command.Writer) { w.NullArray() })
			return
		case withError := <-w.unblock:
			if withError {
				c.replyError(errUnblocked)
			} else {
				c.reply(func(w *command.Writer) { w.NullArray() })
			}
			return
		case <-gone:
			return
		case <-c.s.closing:
			return
		}
	}
}

// expiry returns a channel that fires once timeout milliseconds have
// passed, and a function that stops its timer: none for 0, and none for a
// timeout beyond what a Duration holds (about 292 years): both mean
// forever.
func expiry(timeout int64) (<-chan time.Time, func()) {
	if timeout <= 0 || timeout > math.MaxInt64/int64(time.Millisecond) {
		return nil, func() {}
	}
	t := time.NewTimer(time.Duration(timeout) * time.Millisecond)
	return t.C, func() { t.Stop() }
}

// keysOf returns the key arguments of argv, found by the command's key
// specs.
func keysOf(spec *command.Spec, argv [][]byte) [][]byte {
	refs := command.MetaFor(spec.Meta, argv).KeyRefs(argv, nil)
	keys := make([][]byte, len(refs))
	for i, r := range refs {
		keys[i] = argv[r.Pos]
	}
	return keys
}
