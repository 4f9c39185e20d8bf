package resp

import (
	"strings"

	"github.com/goblindb/goblin/command"
)

// eventLoopForTests gives every server an event loop (loop_env_test.go).
var eventLoopForTests bool

// loopMaxBytes bounds the requests of a batch the loop runs: larger
// writes go to the connection's goroutine, whose proposal may be split.
const loopMaxBytes = 64 << 10

// proposer is what the event loop needs of the backend beyond Backend:
// whether a write proposed now goes to this node's own log without
// waiting (it leads, and its term's first entry is applied), rather than
// to a leader over the network; and a way to make one batch of the
// writes of many clients. *node.Node has it.
type proposer interface {
	ProposesNow() bool
	// ProposeTogether runs fn; what it proposes goes to the log as one
	// batch once it returns.
	ProposeTogether(fn func())
	// ReadsNow reports whether ReadBarrier(local) returns at once.
	ReadsNow(local bool) bool
}

// loopFit is whether the event loop runs a batch (loopable).
type loopFit uint8

const (
	fitNo      loopFit = iota // the connection's goroutine runs it
	fitNow                    // the loop runs it now
	fitBarrier                // the loop runs it once a read barrier taken after it arrived has passed
)

// loopable reports whether c's batch cmds may run in the event loop
// (evloop_linux.go): nothing in it can wait. A write waits for nothing
// until the batch ends (its reply is written once applied), but whatever
// else follows a write in the batch first waits for it (client.drain): a
// read, a connection command, a command refused. So a batch may run if
// its commands are some of the loop's connection commands, reads and
// commands refused, then writes that each run (none refused), from a
// plain connection (no transaction, no MONITOR, users settled, no CLIENT
// PAUSE), while this node proposes to its own log (for writes) and reads
// without waiting (for reads; its own writes applied here).
//
// A batch of linearizable reads alone that this node cannot serve without
// a read barrier (on a follower, the leader's read index; on a leader,
// its writes in flight applied) fits once a barrier taken after it
// arrived has passed: the loop takes one for all such batches at once,
// as the connections' goroutines would share one round, and runs them
// when it returns, with none of their goroutines woken.
func (s *Server) loopable(c *client, cmds [][][]byte) loopFit {
	if c.multi != nil || c.monitoring.Load() || c.acl.early || s.pause.active.Load() {
		return fitNo
	}
	p, ok := s.backend.(proposer)
	if !ok {
		return fitNo
	}
	size, writes, reads := 0, 0, 0
	for _, argv := range cmds {
		if len(argv) == 0 {
			continue
		}
		if size += argvBytes(argv); size > loopMaxBytes {
			return fitNo
		}
		spec := command.Find(argv[0])
		if spec == nil || !spec.CheckArity(len(argv)) || spec.CheckSub(argv) != nil {
			if writes > 0 {
				return fitNo
			}
			continue // refused, without waiting for anything
		}
		if spec.Flags&command.Blocking != 0 {
			return fitNo
		}
		if spec.Edge || spec.Flags&command.Write == 0 {
			if writes > 0 || (spec.Edge && !loopEdge(spec.Name, argv)) {
				return fitNo
			}
			if !spec.Edge {
				reads++
			}
			continue
		}
		if c.authRequired() || !c.acl.user.Unrestricted() {
			// A refusal would wait for the writes before it.
			return fitNo
		}
		if writes > 0 && spec.Validate != nil && spec.Validate(argv) != nil {
			return fitNo
		}
		writes++
	}
	if writes > 0 && !p.ProposesNow() {
		return fitNo
	}
	if reads > 0 {
		if c.written > s.backend.AppliedIndex() {
			return fitNo // its goroutine waits for its own writes first
		}
		if !p.ReadsNow(c.readonly) {
			if writes > 0 || c.readonly {
				return fitNo
			}
			return fitBarrier
		}
	}
	return fitNow
}

// plainClient reports whether c may go back to the event loop after a
// batch its goroutine ran: no transaction under way, not a MONITOR.
func plainClient(c *client) bool {
	return c.multi == nil && !c.monitoring.Load()
}

// loopEdge reports whether the loop runs the connection command name:
// those that never wait.
func loopEdge(name string, argv [][]byte) bool {
	switch name {
	case "ping", "echo", "select", "hello", "auth", "readonly", "readwrite":
		return true
	case "client":
		switch strings.ToLower(string(argv[1])) {
		case "setname", "setinfo", "getname", "id", "info":
			return true
		}
	}
	return false
}
