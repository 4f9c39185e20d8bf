package resp

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/command"
)

// CLIENT PAUSE holds clients' commands until a deadline or CLIENT UNPAUSE,
// as Redis does: ALL holds every command (CLIENT UNPAUSE too), WRITE
// holds the commands that may write (and EXEC of a transaction holding
// one); reads go on. A held command waits before it runs, so it runs
// with the state the pause ended with. With no pause, the check costs
// one atomic load.

type pauseState struct {
	active atomic.Bool
	mu     sync.Mutex
	until  time.Time
	all    bool
	// changed is closed when the pause is lifted or changed.
	changed chan struct{}
}

// set pauses clients until until; a pause already longer, or of all
// commands while this one is of writes, is kept, as Redis keeps the
// strictest.
func (p *pauseState) set(until time.Time, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active.Load() {
		if p.until.After(until) {
			until = p.until
		}
		all = all || p.all
		close(p.changed)
	}
	p.until, p.all = until, all
	p.changed = make(chan struct{})
	p.active.Store(true)
}

func (p *pauseState) unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active.Load() {
		p.active.Store(false)
		close(p.changed)
	}
}

// waitPause holds the command while a pause applies to it.
func (c *client) waitPause(spec *command.Spec, argv [][]byte) {
	p := &c.s.pause
	for {
		p.mu.Lock()
		if !p.active.Load() {
			p.mu.Unlock()
			return
		}
		left := time.Until(p.until)
		if left <= 0 {
			p.active.Store(false)
			close(p.changed)
			p.mu.Unlock()
			return
		}
		if !p.all && !c.mayWrite(spec, argv) {
			p.mu.Unlock()
			return
		}
		changed := p.changed
		p.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-changed:
		case <-t.C:
		case <-c.s.closing:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// mayWrite reports whether argv may write: a write command, or EXEC of a
// transaction holding one.
func (c *client) mayWrite(spec *command.Spec, argv [][]byte) bool {
	if spec.Name == "exec" && c.multi != nil {
		for _, m := range c.multi.metas {
			if m.Flags&(command.CmdWrite|command.CmdMayReplicate) != 0 {
				return true
			}
		}
		return false
	}
	return command.MetaFor(spec.Meta, argv).Flags&(command.CmdWrite|command.CmdMayReplicate) != 0
}

// clientPause answers CLIENT PAUSE <timeout> [WRITE|ALL].
func clientPause(c *client, argv [][]byte) {
	all := true
	if len(argv) == 4 {
		switch strings.ToLower(string(argv[3])) {
		case "write":
			all = false
		case "all":
		default:
			c.replyError(command.Errorf("ERR CLIENT PAUSE mode must be WRITE or ALL"))
			return
		}
	}
	// As Redis: an end past the clock's range (ErrTimeoutRange) would
	// pause the node for good, CLIENT UNPAUSE included.
	ms, err := command.ParseTimeoutMillis(argv[2], time.Now().UnixMilli())
	if err != nil {
		c.replyError(err)
		return
	}
	c.s.pause.set(time.Now().Add(time.Duration(min(ms, int64(1<<62)/int64(time.Millisecond)))*time.Millisecond), all)
	c.reply(func(w *command.Writer) { w.OK() })
}
