package resp

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/internal/newest"
)

// SLOWLOG keeps the commands that took at least slowlog-log-slower-than
// microseconds (negative: none, 0: all), newest first, at most
// slowlog-max-len of them, as Redis does. A command's time is how long
// it took to answer once it ran: a read's or an edge command's run, a
// write's wait from its proposal until it was applied on this node (the
// Raft commit included). A blocking command's wait for data is not
// counted. Each entry holds at most 32 arguments of at most 128 bytes,
// as in Redis.

const (
	slowlogMaxArgc = 32
	slowlogMaxArg  = 128
)

type slowEntry struct {
	id, at, micros int64
	argv           [][]byte
	addr, name     string
}

type slowlog struct {
	threshold atomic.Int64 // µs
	maxLen    atomic.Int64
	mu        sync.Mutex
	// entries is full while every command is slow, as on a node under
	// load: newest.Log drops its oldest entry without moving the others.
	entries newest.Log[slowEntry]
	nextID  int64
}

// live returns the log, oldest first; l.mu is held.
func (l *slowlog) live() []slowEntry { return l.entries.Entries() }

// keep is slowlog-max-len as a count of entries.
func (l *slowlog) keep() int { return int(min(l.maxLen.Load(), math.MaxInt)) }

func (l *slowlog) init() {
	l.threshold.Store(10000)
	l.maxLen.Store(128)
}

// slow reports whether a command that took micros goes to the log.
func (l *slowlog) slow(micros int64) bool {
	th := l.threshold.Load()
	return th >= 0 && micros >= th
}

func (l *slowlog) add(c *client, argv [][]byte, micros int64) {
	n := min(len(argv), slowlogMaxArgc)
	e := slowEntry{at: time.Now().Unix(), micros: micros, argv: make([][]byte, n), addr: c.addr, name: c.name}
	// The arguments kept are copied into one buffer.
	size := 0
	for _, a := range argv[:n] {
		size += min(len(a), slowlogMaxArg)
	}
	buf := make([]byte, 0, size)
	for j := range n {
		a := argv[j]
		switch {
		case n != len(argv) && j == n-1:
			a = []byte("... (" + strconv.Itoa(len(argv)-n+1) + " more arguments)")
		case len(a) > slowlogMaxArg:
			a = append(a[:slowlogMaxArg:slowlogMaxArg], "... ("+strconv.Itoa(len(a)-slowlogMaxArg)+" more bytes)"...)
		default:
			at := len(buf)
			buf = append(buf, a...)
			a = buf[at:len(buf):len(buf)]
		}
		e.argv[j] = a
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.id = l.nextID
	l.nextID++
	l.entries.Add(e, l.keep())
}

// trim drops the oldest entries past slowlog-max-len; l.mu is held.
func (l *slowlog) trim() { l.entries.Keep(l.keep()) }

// commandDone records a command that took d in the slow log and the
// latency monitor when it passes their thresholds. argv is redacted
// as Redis redacts it (AUTH's and HELLO's credentials).
func (s *Server) commandDone(c *client, argv [][]byte, d time.Duration) {
	micros := d.Microseconds()
	slow := s.slowlog.slow(micros)
	late := s.latency.over(micros)
	if !slow && !late {
		return
	}
	spec := command.Find(argv[0])
	if spec == nil {
		return
	}
	m := command.MetaFor(spec.Meta, argv)
	if slow && m.Flags&command.CmdSkipSlowlog == 0 {
		s.slowlog.add(c, redact(argv), micros)
	}
	if late {
		event := "command"
		if m.Flags&command.CmdFast != 0 {
			event = "fast-command"
		}
		s.latency.add(event, micros/1000)
	}
}

// redact returns argv with the credentials of AUTH and HELLO AUTH
// replaced, as Redis shows them in the slow log and to monitors.
func redact(argv [][]byte) [][]byte {
	switch {
	case eqFold(argv[0], "auth"):
		out := make([][]byte, len(argv))
		out[0] = argv[0]
		for j := 1; j < len(argv); j++ {
			out[j] = redacted
		}
		return out
	case eqFold(argv[0], "hello"):
		out := append([][]byte(nil), argv...)
		for j := 2; j+2 < len(out); j++ {
			if eqFold(out[j], "auth") {
				out[j+1], out[j+2] = redacted, redacted
				j += 2
			}
		}
		return out
	}
	return argv
}

var redacted = []byte("(redacted)")

func eqFold(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

func cmdSlowlog(c *client, argv [][]byte) {
	l := &c.s.slowlog
	switch {
	case eqFold(argv[1], "help"):
		c.reply(func(w *command.Writer) {
			command.WriteHelp(w, argv[0], []string{
				"GET [<count>]", "    Return the newest <count> entries of the slow log (default: 10, -1: all).",
				"    Each entry holds: id, timestamp, time in microseconds, arguments,",
				"    client address, client name.",
				"LEN", "    Return the number of entries in the slow log.",
				"RESET", "    Empty the slow log.",
			})
		})
	case eqFold(argv[1], "reset"):
		l.mu.Lock()
		l.entries.Reset()
		l.mu.Unlock()
		c.reply(func(w *command.Writer) { w.OK() })
	case eqFold(argv[1], "len"):
		l.mu.Lock()
		n := len(l.live())
		l.mu.Unlock()
		c.reply(func(w *command.Writer) { w.Int(int64(n)) })
	case eqFold(argv[1], "get") && len(argv) <= 3:
		count := int64(10)
		if len(argv) == 3 {
			n, ok := command.ParseInt(argv[2])
			if !ok || n < -1 {
				c.replyError(command.Errorf("ERR count should be greater than or equal to -1"))
				return
			}
			count = n
		}
		l.mu.Lock()
		live := l.live()
		if count == -1 || count > int64(len(live)) {
			count = int64(len(live))
		}
		entries := make([]slowEntry, count)
		for i := range entries {
			entries[i] = live[len(live)-1-i]
		}
		l.mu.Unlock()
		c.reply(func(w *command.Writer) {
			w.Array(len(entries))
			for _, e := range entries {
				w.Array(6)
				w.Int(e.id)
				w.Int(e.at)
				w.Int(e.micros)
				w.Array(len(e.argv))
				for _, a := range e.argv {
					w.Bulk(a)
				}
				w.BulkString(e.addr)
				w.BulkString(e.name)
			}
		})
	default:
		c.replyError(command.SubcommandSyntaxError(argv))
	}
}
