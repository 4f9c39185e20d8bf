package resp

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// multiState is a transaction being queued.
type multiState struct {
	commands []raftfsm.Command
	// edge[i] is the handler the edge runs for commands[i] at EXEC, nil
	// for a command of the state machine.
	edge []edgeFunc
	// metas[i] is commands[i]'s metadata, for the permission check EXEC
	// runs again; denied[i], set at EXEC, replaces the reply of a command
	// no longer allowed.
	metas  []*command.Meta
	denied []error
	dirty  bool // a queued command was rejected: EXEC aborts
	db     int  // the database the next queued command runs in
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
func (c *client) queue(argv [][]byte, spec *command.Spec, run edgeFunc) {
	if spec.Flags&command.NoMulti != 0 {
		c.multi.dirty = true
		c.replyError(errNotAllowed)
		return
	}
	cmd := raftfsm.Command{DB: c.multi.db, Argv: copyArgv(argv)}
	c.setInfo(func() { c.multi.commands = append(c.multi.commands, cmd) })
	var edge edgeFunc
	if spec.Edge && spec.InMulti == command.MultiAtExec {
		edge = run
	}
	c.multi.edge = append(c.multi.edge, edge)
	c.multi.metas = append(c.multi.metas, command.MetaFor(spec.Meta, argv))
	if spec.Name == "select" {
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
	c.setInfo(func() { c.multi = &multiState{db: c.db} })
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdDiscard(c *client, argv [][]byte) {
	if c.multi == nil {
		c.replyError(command.Errorf("ERR DISCARD without MULTI"))
		return
	}
	c.setInfo(func() { c.multi = nil })
	c.watch = watchState{}
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdExec(c *client, argv [][]byte) {
	// Monitors see EXEC once it ran, after the commands it ran.
	defer c.s.monitors.feed(c, command.Find(argv[0]), argv)
	m := c.multi
	if m == nil {
		c.replyError(command.Errorf("ERR EXEC without MULTI"))
		return
	}
	c.setInfo(func() { c.multi = nil })
	watch := c.watch
	c.watch = watchState{}
	if m.dirty {
		c.replyError(command.Errorf("EXECABORT Transaction discarded because of previous errors."))
		return
	}
	// Permissions are checked again, as Redis does: they may have changed
	// since the commands were queued. A command no longer allowed does
	// not run; an error takes its reply's place.
	m.denied = make([]error, len(m.commands))
	spliced := false
	for i, cmd := range m.commands {
		m.denied[i] = c.checkQueued(m.metas[i], cmd.Argv)
		spliced = spliced || m.denied[i] != nil || m.edge[i] != nil
	}
	// The state machine runs the data commands as one entry; the edge runs
	// the connection and server commands queued among them once it is
	// applied, and their replies take their places in EXEC's reply.
	data := make([]raftfsm.Command, 0, len(m.commands))
	for i, cmd := range m.commands {
		if m.edge[i] == nil && m.denied[i] == nil {
			data = append(data, cmd)
		}
	}
	// Monitors see the transaction's commands as it runs them, then EXEC.
	for i, cmd := range m.commands {
		if m.denied[i] == nil {
			c.s.monitors.feed(c, command.Find(cmd.Argv[0]), cmd.Argv)
		}
	}
	e := c.entry(raftfsm.OpMulti, data)
	e.Watched = watch.keys
	res, err := c.s.backend.Propose(&e)()
	c.wrote(res)
	if errors.Is(err, node.ErrOOM) {
		// Refused as a whole before it ran, as Redis refuses an EXEC
		// whose transaction holds a command that may grow memory.
		c.replyError(command.Errorf("EXECABORT Transaction discarded because of: %s", errOOM.Error()))
		return
	}
	if err != nil {
		c.replyError(translate(err))
		return
	}
	// A transaction that ran leaves the connection in its last SELECTed
	// database; one aborted by WATCH replied with a null array and did not.
	ran := len(res.Reply) > 1 && res.Reply[0] == '*' && res.Reply[1] != '-'
	if ran {
		c.setInfo(func() { c.db = m.db })
	}
	if !ran || !spliced {
		c.noteExec(m, res.Reply, ran)
		c.send(res.Reply)
		return
	}
	reply := spliceExec(c, m, res.Reply)
	c.noteExec(m, reply, ran)
	c.send(reply)
}

// noteExec counts the errors among the replies of a transaction that ran
// as failed calls of their commands (a command denied at EXEC as a
// refused one), as Redis counts the commands EXEC runs. The commands run
// at the edge were counted as they answered (spliceExec).
func (c *client) noteExec(m *multiState, reply []byte, ran bool) {
	if !ran {
		return
	}
	saved := c.cur
	defer func() { c.cur = saved }()
	rest := reply[bytes.IndexByte(reply, '\n')+1:]
	for i, cmd := range m.commands {
		n := replyLen(rest)
		if m.edge[i] == nil {
			c.cur = nil
			if spec := command.Find(cmd.Argv[0]); spec != nil {
				if m.denied[i] == nil {
					c.cur = c.s.commandStat(spec.Name)
				} else {
					c.s.commandStat(spec.Name).rejected.Add(1)
				}
			}
			c.noteReply(rest[:n])
		}
		rest = rest[n:]
	}
}

// spliceExec builds EXEC's reply from the state machine's array of data
// command replies and the replies of the edge commands, run now, in the
// order the commands were queued.
func spliceExec(c *client, m *multiState, reply []byte) []byte {
	rest := reply[bytes.IndexByte(reply, '\n')+1:]
	out := []byte("*" + strconv.Itoa(len(m.commands)) + "\r\n")
	c.acl.execing = true
	defer func() { c.acl.execing = false }()
	for i, cmd := range m.commands {
		run := m.edge[i]
		switch {
		case m.denied[i] != nil:
			var w command.Writer
			w.Error(m.denied[i])
			out = append(out, w.Bytes()...)
		case run == nil:
			n := replyLen(rest)
			out = append(out, rest[:n]...)
			rest = rest[n:]
		default:
			c.capture = out
			saved := c.cur
			if spec := command.Find(cmd.Argv[0]); spec != nil {
				c.cur = c.s.commandStat(spec.Name)
			}
			run(c, cmd.Argv)
			c.cur = saved
			out, c.capture = c.capture, nil
		}
	}
	return out
}

// replyLen returns the length of the first RESP value in b, which holds
// whole values (a reply the state machine wrote).
func replyLen(b []byte) int {
	nl := bytes.IndexByte(b, '\n') + 1
	n, _ := strconv.Atoi(string(b[1 : nl-2]))
	switch b[0] {
	case '$', '=', '!':
		if n < 0 {
			return nl
		}
		return nl + n + 2
	case '*', '~', '>', '%', '|':
		if b[0] == '%' || b[0] == '|' {
			n *= 2
		}
		at := nl
		for ; n > 0; n-- {
			at += replyLen(b[at:])
		}
		return at
	}
	return nl
}

func cmdWatch(c *client, argv [][]byte) {
	if c.multi != nil {
		// Refused, but unlike a queuing error it does not doom the
		// transaction (as in Redis).
		c.replyError(command.Errorf("ERR WATCH inside MULTI is not allowed"))
		return
	}
	if err := c.ownWrites(); err != nil {
		c.replyError(translate(err))
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
