package resp

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tidwall/redcon"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
)

// readTimeout bounds how long a read waits for its consistency check.
const readTimeout = 5 * time.Second

// runBatch executes the commands redcon read in one go, in order.
func (c *client) runBatch(cmds []redcon.Command) {
	c.barrier = false
	for _, cmd := range cmds {
		if len(cmd.Args) == 0 {
			continue
		}
		c.execute(cmd.Args)
	}
	c.drain()
}

// drain proposes the writes gathered so far, waits for every proposed
// write, and writes their replies.
func (c *client) drain() {
	c.proposeGathered()
	for i, wait := range c.pending {
		res, err := wait()
		if err != nil {
			c.replyError(translate(err))
		} else {
			c.conn.WriteRaw(res.Reply)
		}
		c.pending[i] = nil
	}
	c.pending = c.pending[:0]
}

// execute runs one command: connection commands here, data commands
// through the backend.
func (c *client) execute(argv [][]byte) {
	name := argv[0]
	cc := lookupConnCommand(name)
	var spec *command.Spec
	if cc == nil {
		spec = command.Lookup(name)
	}
	fullname := ""
	switch {
	case cc != nil:
		fullname = cc.name
	case spec != nil:
		fullname = spec.Name
	}
	c.lastTime.Store(time.Now().UnixMilli())
	if fullname != "" {
		c.lastCmd.Store(&fullname)
	}

	if !c.authed && (cc == nil || !cc.noAuth) {
		c.reject(cc, errNoAuth)
		return
	}
	if cc == nil && spec == nil {
		c.reject(nil, command.UnknownCommandError(argv))
		return
	}
	arityOK := false
	if cc != nil {
		arityOK = checkArity(cc.arity, len(argv))
	} else {
		arityOK = spec.CheckArity(len(argv))
	}
	if !arityOK {
		c.reject(cc, command.ArityError(fullname))
		return
	}
	if spec != nil {
		if err := spec.CheckSub(argv); err != nil {
			c.reject(nil, err)
			return
		}
	}
	if cc != nil {
		if err := cc.checkSub(argv); err != nil {
			c.reject(cc, err)
			return
		}
	}
	c.s.countCommand(fullname)

	if c.multi != nil {
		c.drain()
		switch {
		case cc == nil || cc.inMulti == queue || cc.inMulti == atExec:
			c.queue(argv, spec, cc)
			return
		case cc.inMulti == refuse:
			c.reject(cc, errNotAllowed)
			return
		}
	}
	if cc != nil {
		if cc.async {
			c.proposeGathered() // its reply queues behind theirs
		} else {
			c.drain()
		}
		cc.run(c, argv)
		return
	}
	if spec.Flags&command.Blocking != 0 {
		c.block(spec, argv)
		return
	}
	if spec.Flags&command.Write != 0 {
		c.write(spec, argv)
		return
	}
	c.read(spec, argv)
}

// reject refuses a command before it runs, as Redis's rejectCommand: a
// transaction being queued is doomed, and a refused EXEC aborts it there
// and then.
func (c *client) reject(cc *connCommand, err error) {
	c.drain()
	c.s.stats.rejected.Add(1)
	if cc != nil && cc.name == "exec" {
		c.multi = nil
		c.watch = watchState{}
		msg := strings.TrimPrefix(err.Error(), "ERR ")
		c.replyError(command.Errorf("EXECABORT Transaction discarded because of: %s", msg))
		return
	}
	c.rejectInMulti()
	c.replyError(err)
}

func checkArity(arity, argc int) bool {
	if arity > 0 {
		return argc == arity
	}
	return argc >= -arity
}

// write validates a write command and proposes it; its reply is written by
// drain, in order.
func (c *client) write(spec *command.Spec, argv [][]byte) {
	if spec.Validate != nil {
		if err := spec.Validate(argv); err != nil {
			c.drain()
			c.replyError(err)
			return
		}
	}
	c.gathered = append(c.gathered, raftfsm.Command{DB: c.db, Argv: argv})
	if len(c.gathered) >= maxGathered {
		c.proposeGathered()
	}
}

// maxGathered bounds how many pipelined writes share one log entry.
const maxGathered = 256

// proposeGathered proposes the consecutive writes gathered from the
// current batch as one entry (OpBatch when there are several), without
// waiting. The argument slices still point into the connection's read
// buffer, which is only valid while the batch runs: every path out of the
// batch (a read, a connection command, the batch's end) comes here first,
// and Propose encodes before returning.
func (c *client) proposeGathered() {
	n := len(c.gathered)
	if n == 0 {
		return
	}
	op := raftfsm.OpBatch
	if n == 1 {
		op = raftfsm.OpCommand
	}
	wait := c.s.backend.Propose(c.entry(op, c.gathered))
	// Propose has encoded the entry: the slice can gather the next run.
	clear(c.gathered)
	c.gathered = c.gathered[:0]
	if n == 1 {
		c.pending = append(c.pending, wait)
		return
	}
	c.pending = append(c.pending, func() (raftfsm.Result, error) {
		res, err := wait()
		if err == nil {
			return res, nil
		}
		// The entry failed as a whole: every command in it gets the error.
		var w command.Writer
		w.Proto = c.proto
		for range n {
			w.Error(translate(err))
		}
		c.s.stats.errors.Add(int64(n))
		return raftfsm.Result{Reply: w.Bytes()}, nil
	})
}

// entry builds a log entry of commands stamped with the proposing node's
// clock and this connection's reply format.
func (c *client) entry(op raftfsm.Op, cmds []raftfsm.Command) *raftfsm.Entry {
	return &raftfsm.Entry{
		Op:       op,
		Time:     c.s.backend.Now(),
		Proto:    uint8(c.proto),
		Double70: c.s.cfg.Double70,
		Commands: cmds,
	}
}

// read runs a read command once the batch's writes are applied and a
// consistency check has passed.
func (c *client) read(spec *command.Spec, argv [][]byte) {
	c.drain()
	if err := c.readBarrier(); err != nil {
		c.replyError(translate(err))
		return
	}
	w := c.writer()
	c.s.backend.View(func(ks *keyspace.Keyspace, now int64) {
		ctx := command.Ctx{KS: ks, DB: c.db, Now: now, W: w, Rand: rand.Uint64}
		spec.Run(&ctx, argv)
	})
	c.flush()
}

// readBarrier takes one consistency check per batch: every command in the
// batch arrived before it started, so it covers them all.
func (c *client) readBarrier() error {
	if c.barrier {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	if err := c.s.backend.ReadBarrier(ctx, c.readonly); err != nil {
		return err
	}
	c.barrier = true
	return nil
}
