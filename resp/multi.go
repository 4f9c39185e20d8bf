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

// watchState is what WATCH recorded: the keys and the log index the
// connection had seen, so EXEC aborts if any key changed after it.
type watchState struct {
	keys  []raftfsm.WatchedKey
	index uint64
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
	e.WatchIndex, e.Watched = watch.index, watch.keys
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
		c.rejectInMulti()
		c.replyError(command.Errorf("ERR WATCH inside MULTI is not allowed"))
		return
	}
	if len(c.watch.keys) == 0 {
		c.watch.index = c.s.backend.AppliedIndex()
	}
	c.s.backend.View(func(ks *keyspace.Keyspace, now int64) {
		for _, k := range argv[1:] {
			db := ks.DB(c.db)
			expired := db.Peek(k) != nil && db.Get(k, now) == nil
			c.watch.keys = append(c.watch.keys, raftfsm.WatchedKey{DB: c.db, Key: append([]byte(nil), k...), Expired: expired})
		}
	})
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdUnwatch(c *client, argv [][]byte) {
	c.watch = watchState{}
	c.reply(func(w *command.Writer) { w.OK() })
}
