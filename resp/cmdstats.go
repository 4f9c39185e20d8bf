package resp

import (
	"bytes"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/internal/hist"
	"github.com/goblindb/goblin/raftfsm"
)

// cmdStat counts one command's calls for INFO commandstats and
// latencystats and for the metrics endpoint. A client remembers the
// cmdStat of the command it last looked up (lookup), so the hot path
// touches it through a pointer: no map lookup per command.
type cmdStat struct {
	name     string
	calls    atomic.Int64
	rejected atomic.Int64 // refused before running (arity, auth, ACL, OOM)
	failed   atomic.Int64 // ran and answered an error
	nanos    atomic.Int64 // time spent, in nanoseconds
	lat      hist.Histogram
}

// done records a call that took d.
func (st *cmdStat) done(d time.Duration) {
	st.nanos.Add(int64(d))
	st.lat.Record(d)
}

// CommandStat is one command's counters at one moment (Server.Commands).
type CommandStat struct {
	Name     string
	Calls    int64
	Rejected int64
	Failed   int64
	// Time is the total time the calls took: for a read, running it; for
	// a write, from its arrival until its entry was applied here.
	Time    time.Duration
	Latency *hist.Snapshot
}

// Commands returns the counters of every command called since the last
// CONFIG RESETSTAT, sorted by name.
func (s *Server) Commands() []CommandStat {
	var out []CommandStat
	s.stats.perCommand.Range(func(_, v any) bool {
		st := v.(*cmdStat)
		cs := CommandStat{Name: st.name, Calls: st.calls.Load(), Rejected: st.rejected.Load(), Failed: st.failed.Load(),
			Time: time.Duration(st.nanos.Load())}
		if cs.Calls == 0 && cs.Rejected == 0 {
			return true // looked up, never counted
		}
		cs.Latency = st.lat.Snapshot()
		out = append(out, cs)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// commandStat returns the counters of name's calls.
func (s *Server) commandStat(name string) *cmdStat {
	v, ok := s.stats.perCommand.Load(name)
	if !ok {
		v, _ = s.stats.perCommand.LoadOrStore(name, &cmdStat{name: name})
	}
	return v.(*cmdStat)
}

// maxErrorCodes bounds the error codes errorstats tracks, as Redis does:
// past it, new codes are counted only in total_error_replies.
const maxErrorCodes = 128

// errorStats counts error replies by their code (the first word: ERR,
// WRONGTYPE, NOPERM...).
type errorStats struct {
	mu    sync.Mutex
	codes map[string]int64
}

func (e *errorStats) add(code []byte) {
	e.mu.Lock()
	if n, ok := e.codes[string(code)]; ok {
		e.codes[string(code)] = n + 1
	} else if len(e.codes) < maxErrorCodes {
		if e.codes == nil {
			e.codes = map[string]int64{}
		}
		e.codes[string(code)] = 1
	}
	e.mu.Unlock()
}

// ErrorCount is how many error replies had one code.
type ErrorCount struct {
	Code  string
	Count int64
}

// Errors returns the error replies counted by code, sorted by code.
func (s *Server) Errors() []ErrorCount {
	e := &s.stats.errorCodes
	e.mu.Lock()
	out := make([]ErrorCount, 0, len(e.codes))
	for c, n := range e.codes {
		out = append(out, ErrorCount{c, n})
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

func (e *errorStats) reset() {
	e.mu.Lock()
	e.codes = nil
	e.mu.Unlock()
}

// noteReply counts reply, one whole RESP value the current command
// answered, if it is an error: in total_error_replies, in errorstats by
// its code, and as a failed call of the command (c.cur), unless the
// command was refused before it ran (reject clears c.cur).
func (c *client) noteReply(reply []byte) {
	if len(reply) == 0 || reply[0] != '-' {
		return
	}
	c.s.stats.errors.Add(1)
	code := reply[1:]
	if i := bytes.IndexAny(code, " \r"); i >= 0 {
		code = code[:i]
	}
	c.s.stats.errorCodes.add(code)
	if c.cur != nil {
		c.cur.failed.Add(1)
	}
}

// answer writes the reply of a pending entry, whose wait returned res
// and err, and counts the errors among the replies of its writes, whose
// counters are sts.
func (c *client) answer(res raftfsm.Result, err error, sts []*cmdStat) {
	saved := c.cur
	defer func() { c.cur = saved }()
	if err != nil {
		// Only a lone write's entry fails with an error: a batch's wait
		// answers each of its writes (proposeGathered).
		c.cur = sts[0]
		c.replyError(translate(err))
		return
	}
	reply := res.Reply
	if bytes.IndexByte(reply, '-') < 0 {
		reply = nil // no error among them: nothing to split
	}
	for _, st := range sts {
		if len(reply) == 0 {
			break
		}
		c.cur = st
		n := replyLen(reply)
		c.noteReply(reply[:n])
		reply = reply[n:]
	}
	c.send(res.Reply)
}
