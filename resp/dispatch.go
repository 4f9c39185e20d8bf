package resp

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/raftfsm"
)

// runBatch executes a batch of requests (those that arrived together), in
// order.
func (c *client) runBatch(cmds [][][]byte) {
	c.startBatch(cmds, false)
	c.endBatch()
}

// startBatch runs a batch's commands; the writes among the last of them
// may still be gathered or in flight (endBatch waits for them). covered:
// a read barrier taken after the batch arrived has passed (the event
// loop's), so its reads need none of their own.
func (c *client) startBatch(cmds [][][]byte, covered bool) {
	c.barrier = covered
	c.batchStart, c.lastTick = time.Now(), 0
	c.lastTime.Store(c.batchStart.UnixMilli())
	for _, argv := range cmds {
		if c.quit || c.isKilled() {
			break // Redis runs nothing after QUIT, or once the user is gone
		}
		if len(argv) == 0 {
			continue
		}
		c.execute(argv)
		if c.checkOutput() {
			break
		}
	}
}

// endBatch waits for the batch's writes and writes their replies.
func (c *client) endBatch() {
	c.drain()
	c.checkOutput()
}

// drain proposes the writes gathered so far, waits for every proposed
// write, and writes their replies.
func (c *client) drain() {
	c.endView()
	c.proposeGathered()
	done := 0
	for i, p := range c.pending {
		res, err := p.wait()
		c.wrote(res)
		sts := c.pendingStats[done : done+p.n]
		c.answer(res, err, sts)
		d := time.Since(p.start)
		for j, argv := range c.pendingArgv[done : done+p.n] {
			sts[j].done(d)
			c.s.commandDone(c, argv, d)
		}
		done += p.n
		c.pending[i] = pendingWrite{}
	}
	c.pending = c.pending[:0]
	clear(c.pendingArgv)
	c.pendingArgv = c.pendingArgv[:0]
	clear(c.pendingStats)
	c.pendingStats = c.pendingStats[:0]
}

// pendingWrite is an entry of n writes proposed at start, whose reply
// wait returns.
type pendingWrite struct {
	wait  func() (raftfsm.Result, error)
	start time.Time
	n     int
}

// execute runs one command: the edge's own commands here, the state
// machine's through the backend.
func (c *client) execute(argv [][]byte) {
	spec, run, st := c.lookup(argv[0])
	c.cur = st
	if spec != nil {
		c.setLastCmd(lastCmdName(&spec.Name, spec.Meta, argv))
	}

	if c.acl.early {
		c.settleACL()
	}
	if us := c.s.users(); us != c.acl.users {
		c.refreshUsers(us)
		if c.isKilled() {
			return // the connection's user is gone: it closes
		}
	}
	// Redis's order: existence and arity, authentication, commands
	// refused in a transaction, then permissions.
	if spec == nil {
		c.reject(nil, command.UnknownCommandError(argv))
		return
	}
	if !spec.CheckArity(len(argv)) {
		c.reject(spec, command.ArityError(spec.Name))
		return
	}
	if err := spec.CheckSub(argv); err != nil {
		c.reject(spec, err)
		return
	}
	if c.authRequired() && spec.Meta.Flags&command.CmdNoAuth == 0 {
		c.reject(spec, errNoAuth)
		return
	}
	if c.multi != nil && ((spec.Edge && spec.InMulti == command.MultiRefuse) || spec.Flags&command.NoMulti != 0) {
		c.reject(spec, errNotAllowed)
		return
	}
	if !c.acl.user.Unrestricted() && !c.permit(spec, argv) {
		return
	}
	if c.multi != nil && c.s.mem != nil && !oomExempt(spec) && c.s.mem.OverMaxMemory() {
		// Queuing holds memory on this node: over its maxmemory, Redis
		// refuses every command but those ending the transaction.
		c.reject(spec, errOOM)
		return
	}
	if c.s.pause.active.Load() {
		// As Redis, before a command is queued too.
		c.drain()
		c.waitPause(spec, argv)
	}
	if c.multi != nil {
		c.drain()
		if !spec.Edge || spec.InMulti == command.MultiQueue || spec.InMulti == command.MultiAtExec {
			st.calls.Add(1)
			c.s.stats.commands.Add(1)
			c.queue(argv, spec, run)
			return
		}
	}
	st.calls.Add(1)
	c.s.stats.commands.Add(1)
	if !spec.Edge {
		c.s.monitors.feed(c, spec, argv)
	}
	if spec.Edge || spec.Flags&(command.Blocking|command.Write) != 0 {
		c.endView()
	}
	// A command's time runs from the end of the one before it (one clock
	// read per command), or, for a read or an edge command, from when the
	// writes before it were applied (they wait for those; a write joins
	// them in the log).
	if spec.Flags&(command.Write|command.Blocking) == 0 && (len(c.gathered) > 0 || len(c.pending) > 0) {
		c.drain()
		c.tick()
	}
	start := c.lastTick
	switch {
	case spec.Edge:
		run(c, argv)
		// Monitors see an edge command as it left the connection (SELECT
		// in its new database); EXEC's shows after its commands (cmdExec).
		if spec.Name != "exec" {
			c.s.monitors.feed(c, spec, argv)
		}
	case spec.Flags&command.Blocking != 0:
		c.block(spec, argv)
		c.tick() // its wait for data is not the next command's
		return
	case spec.Flags&command.Write != 0:
		c.write(spec, argv, c.batchStart.Add(start)) // timed when applied (drain)
		return
	default:
		c.read(spec, argv)
	}
	d := c.tick() - start
	st.done(d)
	c.s.commandDone(c, argv, d)
	c.cur = nil
}

// tick reads the clock: the time since the batch started, remembered as
// lastTick.
func (c *client) tick() time.Duration {
	c.lastTick = time.Since(c.batchStart)
	return c.lastTick
}

// oomExempt reports whether spec may run in a transaction while memory
// is above maxmemory: the commands that end it.
func oomExempt(spec *command.Spec) bool {
	switch spec.Name {
	case "exec", "discard", "quit", "reset":
		return true
	}
	return false
}

// reject refuses a command before it runs, as Redis's rejectCommand: a
// transaction being queued is doomed, and a refused EXEC aborts it there
// and then.
func (c *client) reject(spec *command.Spec, err error) {
	c.drain()
	c.s.stats.rejected.Add(1)
	if c.cur != nil {
		c.cur.rejected.Add(1)
		c.cur = nil // not a failed call: its error counts only as a reply
	}
	if spec != nil && spec.Name == "exec" {
		c.setInfo(func() { c.multi = nil })
		c.watch = watchState{}
		msg := strings.TrimPrefix(err.Error(), "ERR ")
		c.replyError(command.Errorf("EXECABORT Transaction discarded because of: %s", msg))
		return
	}
	c.rejectInMulti()
	c.replyError(err)
}

// write validates a write command and proposes it; its reply is written by
// drain, in order.
func (c *client) write(spec *command.Spec, argv [][]byte, start time.Time) {
	if spec.Validate != nil {
		if err := spec.Validate(argv); err != nil {
			st := c.cur
			c.drain()
			c.cur = st
			c.replyError(err) // a failed call (cmdstats.go)
			st.done(time.Since(start))
			return
		}
	}
	size := argvBytes(argv)
	if len(c.gathered) > 0 && c.gatheredBytes+size > maxGatheredBytes {
		c.proposeGathered()
	}
	if len(c.gathered) == 0 {
		c.gatheredAt = start
	}
	c.gathered = append(c.gathered, raftfsm.Command{DB: c.db, Argv: argv})
	c.gatheredBytes += size
	c.pendingArgv = append(c.pendingArgv, argv)
	c.pendingStats = append(c.pendingStats, c.cur)
	if len(c.gathered) >= maxGathered {
		c.proposeGathered()
	}
}

// maxGathered bounds how many pipelined writes share one log entry.
const maxGathered = 256

// maxGatheredBytes bounds how large their arguments may be together, well
// under node.MaxClusterEntryBytes: pipelined writes that each fit an
// entry never make one too large (a variable for tests).
var maxGatheredBytes = 512 << 10

// argvBytes is the size of a command's arguments.
func argvBytes(argv [][]byte) int {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	return n
}

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
	// The entry is the connection's own (an interface call would move a
	// new one to the heap for each write): Propose does not keep it.
	c.ent = c.entry(op, c.gathered)
	wait := c.s.backend.Propose(&c.ent)
	// Propose has encoded the entry: the slice can gather the next run.
	clear(c.gathered)
	c.gathered = c.gathered[:0]
	c.gatheredBytes = 0
	if n == 1 {
		c.pending = append(c.pending, pendingWrite{wait, c.gatheredAt, 1})
		return
	}
	c.pending = append(c.pending, pendingWrite{n: n, start: c.gatheredAt, wait: func() (raftfsm.Result, error) {
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
		return raftfsm.Result{Reply: w.Bytes()}, nil
	}})
}

// entry builds a log entry of commands stamped with the proposing node's
// clock and this connection's reply format.
func (c *client) entry(op raftfsm.Op, cmds []raftfsm.Command) raftfsm.Entry {
	return raftfsm.Entry{
		Op:       op,
		Time:     c.s.backend.Now(),
		Proto:    uint8(c.proto),
		Double70: c.s.cfg.Double70,
		Commands: cmds,
	}
}

// read runs a read command once the batch's writes are applied and a
// consistency check has passed. Consecutive reads of a batch run under one
// read lock of the keyspace, with one clock (beginView).
func (c *client) read(spec *command.Spec, argv [][]byte) {
	if c.view == nil || c.viewRun >= maxViewRun {
		c.drain()
		if err := c.ownWrites(); err != nil {
			c.replyError(translate(err))
			return
		}
		if err := c.readBarrier(); err != nil {
			c.replyError(translate(err))
			return
		}
		c.view, c.viewNow = c.s.backend.ReadView()
		c.viewRun = 0
	}
	c.viewRun++
	c.ctx = command.Ctx{KS: c.view, DB: c.db, Now: c.viewNow, W: c.writer(), Rand: rand.Uint64}
	spec.Run(&c.ctx, argv)
	if c.ctx.Hits > 0 {
		c.s.stats.hits.Add(int64(c.ctx.Hits))
	}
	if c.ctx.Misses > 0 {
		c.s.stats.misses.Add(int64(c.ctx.Misses))
	}
	c.flush()
}

// lastCmdName is the name CLIENT LIST shows for argv: a container's
// subcommand's full name ("config|get") when argv names one.
func lastCmdName(name *string, m *command.Meta, argv [][]byte) *string {
	if m != nil && len(m.Subs) > 0 && len(argv) > 1 {
		if sm := m.Sub(argv[1]); sm != nil {
			return &sm.Name
		}
	}
	return name
}

// setLastCmd records the command for CLIENT LIST; name points into the
// command table, so storing it allocates nothing.
func (c *client) setLastCmd(name *string) {
	if c.lastCmd.Load() != name {
		c.lastCmd.Store(name)
	}
}

// maxViewRun bounds how many reads run under one read lock, so a long
// pipeline of reads does not hold off the state machine's writes.
const maxViewRun = 128

// endView releases the read lock of a run of reads, if one is held. Every
// path that waits, or runs anything but a read, comes here first.
func (c *client) endView() {
	if c.view != nil {
		c.view.RUnlock()
		c.view = nil
	}
}

// wrote notes the index of a write this client made.
func (c *client) wrote(res raftfsm.Result) {
	c.written = max(c.written, res.Index)
}

// ownWrites waits until this node has applied the client's own writes,
// so that a read here sees them: a follower answers a write once the
// leader has applied it, and applies it itself a moment later. The
// backend bounds the wait.
func (c *client) ownWrites() error {
	if c.written <= c.s.backend.AppliedIndex() {
		return nil
	}
	return c.s.backend.WaitApplied(context.Background(), c.written)
}

// readBarrier takes one consistency check per batch: every command in the
// batch arrived before it started, so it covers them all. The backend
// bounds the wait.
func (c *client) readBarrier() error {
	if c.barrier {
		return nil
	}
	if err := c.s.backend.ReadBarrier(context.Background(), c.readonly); err != nil {
		return err
	}
	c.barrier = true
	return nil
}

// lookup resolves a command name, remembering the last one: a pipeline
// usually repeats one command. run is the edge's handler of an edge
// command; st counts the command's calls (cmdstats.go).
func (c *client) lookup(name []byte) (spec *command.Spec, run edgeFunc, st *cmdStat) {
	gen := c.s.stats.gen.Load()
	if c.lastStat != nil && c.lastGen == gen && bytes.Equal(name, c.lastName) {
		return c.lastSpec, c.lastRun, c.lastStat
	}
	spec = command.Find(name)
	if spec == nil {
		return nil, nil, &c.s.stats.unknown // not remembered
	}
	if spec.Edge {
		run = edgeHandlers[spec.Name]
	}
	st = c.s.commandStat(spec.Name)
	c.lastName = append(c.lastName[:0], name...)
	c.lastSpec, c.lastRun, c.lastGen, c.lastStat = spec, run, gen, st
	return spec, run, st
}
