package resp

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/command"
)

// The latency monitor, as Redis's: when latency-monitor-threshold (ms) is
// above 0, every command that took at least that long adds a sample to
// its event, "fast-command" for commands flagged fast and "command" for
// the others. An event keeps its largest latency and its last 160
// samples, one per second (the largest of the second).

const latencyHistory = 160

type latencySample struct{ at, ms int64 }

type latencyEvent struct {
	samples [latencyHistory]latencySample
	next    int
	max     int64
}

type latencyMonitor struct {
	threshold atomic.Int64 // ms; 0: off
	mu        sync.Mutex
	events    map[string]*latencyEvent
}

// over reports whether a command that took micros is a latency event.
func (l *latencyMonitor) over(micros int64) bool {
	th := l.threshold.Load()
	return th > 0 && micros/1000 >= th
}

func (l *latencyMonitor) add(event string, ms int64) {
	now := time.Now().Unix()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events == nil {
		l.events = map[string]*latencyEvent{}
	}
	e := l.events[event]
	if e == nil {
		e = &latencyEvent{}
		l.events[event] = e
	}
	e.max = max(e.max, ms)
	prev := &e.samples[(e.next+latencyHistory-1)%latencyHistory]
	if prev.at == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	e.samples[e.next] = latencySample{at: now, ms: ms}
	e.next = (e.next + 1) % latencyHistory
}

// names returns the events' names, sorted.
func (l *latencyMonitor) names() []string {
	var out []string
	for n := range l.events {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func cmdLatency(c *client, argv [][]byte) {
	l := &c.s.latency
	switch {
	case eqFold(argv[1], "latest") && len(argv) == 2:
		l.mu.Lock()
		type row struct {
			name          string
			at, last, max int64
		}
		var rows []row
		for _, n := range l.names() {
			e := l.events[n]
			s := e.samples[(e.next+latencyHistory-1)%latencyHistory]
			rows = append(rows, row{n, s.at, s.ms, e.max})
		}
		l.mu.Unlock()
		c.reply(func(w *command.Writer) {
			w.Array(len(rows))
			for _, r := range rows {
				w.Array(4)
				w.BulkString(r.name)
				w.Int(r.at)
				w.Int(r.last)
				w.Int(r.max)
			}
		})
	case eqFold(argv[1], "history") && len(argv) == 3:
		l.mu.Lock()
		var samples []latencySample
		if e := l.events[string(argv[2])]; e != nil {
			for j := range latencyHistory {
				if s := e.samples[(e.next+j)%latencyHistory]; s.at != 0 {
					samples = append(samples, s)
				}
			}
		}
		l.mu.Unlock()
		c.reply(func(w *command.Writer) {
			w.Array(len(samples))
			for _, s := range samples {
				w.Array(2)
				w.Int(s.at)
				w.Int(s.ms)
			}
		})
	case eqFold(argv[1], "reset"):
		l.mu.Lock()
		n := 0
		if len(argv) == 2 {
			n = len(l.events)
			l.events = nil
		} else {
			for _, name := range argv[2:] {
				for ev := range l.events {
					if strings.EqualFold(ev, string(name)) {
						delete(l.events, ev)
						n++
					}
				}
			}
		}
		l.mu.Unlock()
		c.reply(func(w *command.Writer) { w.Int(int64(n)) })
	case eqFold(argv[1], "doctor") && len(argv) == 2:
		c.reply(func(w *command.Writer) { w.Verbatim(l.doctor()) })
	case eqFold(argv[1], "help") && len(argv) == 2:
		c.reply(func(w *command.Writer) {
			command.WriteHelp(w, argv[0], []string{
				"DOCTOR", "    Return a report on the latency events, in words.",
				"HISTORY <event>", "    Return the samples of <event>: [timestamp, latency in ms] pairs.",
				"LATEST", "    Return the latest sample of every event.",
				"RESET [<event> ...]", "    Clear the named events (default: all of them).",
			})
		})
	default:
		c.replyError(command.SubcommandSyntaxError(argv))
	}
}

// doctor describes the events recorded, in Goblin's words.
func (l *latencyMonitor) doctor() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	th := l.threshold.Load()
	switch {
	case th == 0:
		b.WriteString("The latency monitor is off: set latency-monitor-threshold (ms) with CONFIG SET to turn it on.\n")
	case len(l.events) == 0:
		fmt.Fprintf(&b, "No command took %d ms or more since the monitor was last reset.\n", th)
	default:
		fmt.Fprintf(&b, "Commands that took %d ms or more, by event:\n", th)
		for _, n := range l.names() {
			e := l.events[n]
			count, sum := 0, int64(0)
			for _, s := range e.samples {
				if s.at != 0 {
					count++
					sum += s.ms
				}
			}
			fmt.Fprintf(&b, "- %s: %d seconds with samples, average %d ms, worst %d ms.\n", n, count, sum/int64(max(count, 1)), e.max)
		}
		b.WriteString("SLOWLOG GET names the commands; LATENCY RESET clears the events.\n")
	}
	return b.String()
}
