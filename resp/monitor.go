package resp

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/command"
)

// MONITOR streams every command the server runs to the connections that
// asked, one line each, as Redis writes them:
//
//	+1700000000.123456 [0 127.0.0.1:5555] "zadd" "k" "1" "m"
//
// Commands flagged admin are not shown, AUTH's and HELLO's credentials
// are redacted, and the commands of a transaction are shown when EXEC
// runs them, before EXEC itself. With nobody monitoring, feeding costs
// one atomic load.
//
// Each monitor has a goroutine writing its lines. The lines waiting for
// it are its output buffer: one whose waiting lines reach the normal
// class's hard client-output-buffer-limit is closed, as Redis closes it,
// and so, whatever the limit, is one more than monitorBacklog lines
// behind.

const monitorBacklog = 1 << 14

type monitors struct {
	n    atomic.Int32
	mu   sync.Mutex
	outs map[*client]*monitorOut
}

// monitorOut is one monitor's lines waiting to be written, and their
// size in bytes.
type monitorOut struct {
	ch     chan []byte
	queued atomic.Int64
	done   chan struct{} // closed when its goroutine has stopped writing
}

// feed shows argv, run by c, to the monitors.
func (m *monitors) feed(c *client, spec *command.Spec, argv [][]byte) {
	if m.n.Load() == 0 {
		return
	}
	if command.MetaFor(spec.Meta, argv).Flags&(command.CmdAdmin|command.CmdSkipMonitor) != 0 {
		return
	}
	line := monitorLine(c, argv, time.Now())
	hard := int64(c.s.outputLimit())
	m.mu.Lock()
	defer m.mu.Unlock()
	for mc, out := range m.outs {
		if queued := out.queued.Add(int64(len(line))); hard > 0 && queued >= hard {
			m.dropLocked(mc, "closing a MONITOR client for its output buffer limit", "waiting", queued, "limit", hard)
			continue
		}
		select {
		case out.ch <- line:
		default:
			m.dropLocked(mc, "closing a MONITOR client that fell behind")
		}
	}
}

// dropLocked closes monitor mc, logging why.
func (m *monitors) dropLocked(mc *client, why string, args ...any) {
	mc.s.log().Warn(why, append([]any{"client", mc.info()}, args...)...)
	m.removeLocked(mc)
	mc.kill()
}

// monitorLine formats one command as Redis's MONITOR does.
func monitorLine(c *client, argv [][]byte, now time.Time) []byte {
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := strconv.AppendInt(nil, int64(now.Nanosecond()/1000), 10)
	for range 6 - len(us) {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(c.db), 10)
	b = append(b, ' ')
	if c.unix {
		b = append(b, "unix:"...)
		b = append(b, c.s.cfg.UnixSocket...)
	} else {
		b = append(b, c.addr...)
	}
	b = append(b, "] "...)
	for j, a := range redact(argv) {
		if j > 0 {
			b = append(b, ' ')
		}
		b = appendRepr(b, a)
	}
	return append(b, "\r\n"...)
}

// appendRepr appends s quoted and escaped as Redis's sdscatrepr does.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= ' ' && ch <= '~' {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}

// add makes c a monitor: lines wait in its channel from now on, and
// its goroutine writes them once start is called (after MONITOR's OK).
func (m *monitors) add(c *client) (start func()) {
	out := &monitorOut{ch: make(chan []byte, monitorBacklog), done: make(chan struct{})}
	ch := out.ch
	m.mu.Lock()
	if m.outs == nil {
		m.outs = map[*client]*monitorOut{}
	}
	if _, ok := m.outs[c]; ok {
		m.mu.Unlock()
		return func() {}
	}
	m.outs[c] = out
	m.n.Add(1)
	c.monitoring.Store(true)
	m.mu.Unlock()
	nc := c.nc
	return func() {
		go func() {
			defer close(out.done)
			for line := range ch {
				if _, err := nc.Write(line); err != nil {
					m.remove(c)
					c.kill()
					for range ch {
					}
					return
				}
				out.queued.Add(-int64(len(line)))
			}
		}()
	}
}

// remove stops c's monitoring, if it monitors.
func (m *monitors) remove(c *client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeLocked(c)
}

func (m *monitors) removeLocked(c *client) {
	if out, ok := m.outs[c]; ok {
		delete(m.outs, c)
		m.n.Add(-1)
		close(out.ch)
		c.monitoring.Store(false)
	}
}

// stop ends c's monitoring, if it monitors (RESET), and returns once the
// lines queued for it are written: the reply c sends next follows them,
// as it follows them in Redis's output buffer. c's goroutine calls it;
// the monitor's writer has been started (cmdMonitor starts it before the
// connection runs anything else).
func (m *monitors) stop(c *client) {
	m.mu.Lock()
	out := m.outs[c]
	m.removeLocked(c)
	m.mu.Unlock()
	if out != nil {
		<-out.done
	}
}

func cmdMonitor(c *client, argv [][]byte) {
	if c.nc == nil {
		c.replyError(command.Errorf("ERR MONITOR needs a connection"))
		return
	}
	start := c.s.monitors.add(c)
	c.reply(func(w *command.Writer) { w.OK() })
	// The OK goes out before the first line.
	c.flushOut()
	start()
}
