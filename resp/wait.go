package resp

import (
	"math"
	"time"

	"github.com/goblindb/goblin/command"
)

// WAIT numreplicas timeout.
//
// Redis answers how many replicas acknowledged the connection's writes,
// blocking until numreplicas did or timeout (milliseconds, 0: forever)
// passed. Goblin counts the other nodes known to hold the connection's
// last write (ReplicaBackend): an acknowledged write is committed, so at
// least a majority of the voters hold it at once, and the leader learns
// from its followers' progress reports which others do. A blocked WAIT
// checks again every waitPoll; it ends as Redis's does: the count reached,
// the timeout, CLIENT UNBLOCK (TIMEOUT: the count then; ERROR), the
// client gone, or the server closing. Inside a transaction it never
// blocks. Unlike Redis, a follower answers it too: clients write through
// followers.

// ReplicaBackend is what WAIT needs from the backend (*node.Node has
// it); a backend without it has no replicas.
type ReplicaBackend interface {
	ReplicasHolding(index uint64) int
}

// waitPoll is how often a blocked WAIT counts again.
const waitPoll = 10 * time.Millisecond

var errWaitTimeout = command.Errorf("ERR timeout is not an integer or out of range")

func cmdWait(c *client, argv [][]byte) {
	want, ok := command.ParseInt(argv[1])
	if !ok {
		c.replyError(command.ErrNotInteger)
		return
	}
	timeout, ok := command.ParseInt(argv[2])
	switch {
	case !ok:
		c.replyError(errWaitTimeout)
		return
	case timeout < 0:
		c.replyError(command.ErrTimeoutNegative)
		return
	case timeout > math.MaxInt64-c.s.backend.Now():
		c.replyError(command.ErrTimeoutRange)
		return
	}
	have := int64(c.replicasHolding())
	if have >= want || c.capture != nil {
		c.reply(func(w *command.Writer) { w.Int(have) })
		return
	}
	c.drain()
	// The replies before this command leave now, as Redis sends them
	// before a client blocks.
	c.flushOut()
	w := c.s.blocked.add(c.id, c.db, nil)
	defer c.s.blocked.remove(w)
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(timeout) * time.Millisecond)
		defer t.Stop()
		expired = t.C
	}
	var gone <-chan struct{}
	if fc, ok := c.conn.NetConn().(*framedConn); ok {
		gone = fc.fr.WatchClose()
		defer fc.fr.StopWatch()
	}
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if have = int64(c.replicasHolding()); have < want {
				continue
			}
		case <-expired:
			have = int64(c.replicasHolding())
		case withError := <-w.unblock:
			if withError {
				c.replyError(errUnblocked)
				return
			}
			have = int64(c.replicasHolding())
		case <-gone:
			return
		case <-c.s.closing:
			return
		}
		c.reply(func(w *command.Writer) { w.Int(have) })
		return
	}
}

// replicasHolding counts the other nodes known to hold the client's last
// write.
func (c *client) replicasHolding() int {
	rb, ok := c.s.backend.(ReplicaBackend)
	if !ok {
		return 0
	}
	return rb.ReplicasHolding(c.written)
}
