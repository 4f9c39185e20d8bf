package resp

import (
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
)

// multiState is a transaction being queued.
type multiState struct {
	commands []raftfsm.Command
	dirty    bool // a queued command was rejected: EXEC aborts
	db       int  // the database the next queued command runs in
}

// watchState is what WATCH recorded: each key with the log index the
// connection had seen and whether the key existed, so EXEC aborts when a
// key changed after it was watched.
type watchState struct {
	keys []raftfsm.WatchedKey
}

func copyArgv(argv [][]byte) [][]byte {
	out := make([][]byte, len(argv))
	for i, a := range argv {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// rejectInMulti marks the transaction so EXEC aborts, as Redis does when a
// command is refused while queuing.
func (c *client) rejectInMulti() {
	if c.multi != nil {
		c.multi.dirty = true
	}
}

// queue adds a command to the transaction.
func (c *client) queue(argv [][]byte, spec *command.Spec, cc *connCommand) {
	if spec != nil && spec.Flags&command.NoMulti != 0 {
		c.multi.dirty = true
		c.replyError(errNotAllowed)
		return
	}
	c.multi.commands = append(c.multi.commands, raftfsm.Command{DB: c.multi.db, Argv: copyArgv(argv)})
	if cc != nil && cc.name == "select" {
		if db, err := command.ParseDB(argv[1]); err == nil {
			c.multi.db = db
		}
	}
	c.reply(func(w *command.Writer) { w.Simple("QUEUED") })
}

func cmdMulti(c *client, argv [][]byte) {
	if c.multi != nil {
		c.replyError(command.Errorf("ERR MULTI calls can not be nested"))
		return
	}
	c.multi = &multiState{db: c.db}
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdDiscard(c *client, argv [][]byte) {
	if c.multi == nil {
		c.replyError(command.Errorf("ERR DISCARD without MULTI"))
		return
	}
	c.multi = nil
	c.watch = watchState{}
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdExec(c *client, argv [][]byte) {
	m := c.multi
	if m == nil {
		c.replyError(command.Errorf("ERR EXEC without MULTI"))
		return
	}
	c.multi = nil
	watch := c.watch
	c.watch = watchState{}
	if m.dirty {
		c.replyError(command.Errorf("EXECABORT Transaction discarded because of previous errors."))
		return
	}
	e := c.entry(raftfsm.OpMulti, m.commands)
	e.Watched = watch.keys
	res, err := c.s.backend.Propose(e)()
	if err != nil {
		c.replyError(translate(err))
		return
	}
	c.conn.WriteRaw(res.Reply)
	// A transaction that ran leaves the connection in its last SELECTed
	// database; one aborted by WATCH replied with a null array and did not.
	if len(res.Reply) > 0 && res.Reply[0] == '*' && string(res.Reply[:2]) != "*-" {
		c.db = m.db
	}
}

func cmdWatch(c *client, argv [][]byte) {
	if c.multi != nil {
		// Refused, but unlike a queuing error it does not doom the
		// transaction (as in Redis).
		c.replyError(command.Errorf("ERR WATCH inside MULTI is not allowed"))
		return
	}
	c.s.backend.View(func(ks *keyspace.Keyspace, now int64) {
		// The applied index read under the lock may lag the state the lock
		// shows (it is published after a batch's lock is released): a
		// change then looks newer than the watch, and EXEC aborts, never
		// the reverse.
		index := c.s.backend.AppliedIndex()
		for _, k := range argv[1:] {
			if c.watching(k) {
				continue // Redis keeps the first watch of a key
			}
			existed, expired := ks.WatchState(c.db, k, now)
			c.watch.keys = append(c.watch.keys, raftfsm.WatchedKey{
				DB: c.db, Key: append([]byte(nil), k...), Expired: expired, Absent: !existed && !expired, Index: max(index, 1)})
		}
	})
	c.reply(func(w *command.Writer) { w.OK() })
}

// watching reports whether the connection already watches key in its
// current database.
func (c *client) watching(key []byte) bool {
	for _, w := range c.watch.keys {
		if w.DB == c.db && string(w.Key) == string(key) {
			return true
		}
	}
	return false
}

func cmdUnwatch(c *client, argv [][]byte) {
	c.watch = watchState{}
	c.reply(func(w *command.Writer) { w.OK() })
}
