package resp

import (
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

// WAITAOF numlocal numreplicas timeout.
//
// Redis answers two counts for the connection's last write: whether its
// own append-only file holds it on stable storage (numlocal, 0 or 1), and
// how many replicas reported theirs do (numreplicas); it blocks until
// both reach what was asked, or timeout (milliseconds, 0: forever)
// passes. Goblin's append-only file is the Raft log: the local count is
// this node's log (DurableBackend), the replicas are the other nodes,
// counted from their progress reports (node.Replicas.HoldingDurably).
// Under --fsync always an acknowledged write is durable on this node once
// applied here, and on a majority of the voters at once; under everysec
// after the next once-a-second sync. It blocks, ends and answers inside
// a transaction as WAIT does (wait.go), and a follower answers it too.

// DurableBackend is what WAITAOF needs from the backend (*node.Node has
// it): how far what it applied is durable in its log. A backend without
// it keeps no log, like a Redis without appendonly.
type DurableBackend interface {
	DurableIndex() uint64
}

var (
	errWaitaofLocal = command.Errorf("ERR value is out of range, value must between 0 and 1")
	errWaitaofNoAOF = command.Errorf("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
	errPositive     = command.Errorf("ERR value is out of range, must be positive")
)

func cmdWaitaof(c *client, argv [][]byte) {
	local, ok := command.ParseInt(argv[1])
	switch {
	case !ok:
		c.replyError(command.ErrNotInteger)
		return
	case local < 0 || local > 1:
		c.replyError(errWaitaofLocal)
		return
	}
	// Redis gives its one message for both.
	replicas, ok := command.ParseInt(argv[2])
	if !ok || replicas < 0 {
		c.replyError(errPositive)
		return
	}
	timeout, err := command.ParseTimeoutMillis(argv[3], c.s.backend.Now())
	if err != nil {
		c.replyError(err)
		return
	}
	db, hasLog := c.s.backend.(DurableBackend)
	if local > 0 && !hasLog {
		c.replyError(errWaitaofNoAOF)
		return
	}
	acks, ok := c.awaitAcks(timeout, func(r node.Replicas, index uint64) ([2]int, bool) {
		l := 0
		if hasLog && db.DurableIndex() >= index {
			l = 1
		}
		h := r.HoldingDurably(index)
		return [2]int{l, h}, int64(l) >= local && int64(h) >= replicas
	})
	if ok {
		c.reply(func(w *command.Writer) {
			w.Array(2)
			w.Int(int64(acks[0]))
			w.Int(int64(acks[1]))
		})
	}
}
