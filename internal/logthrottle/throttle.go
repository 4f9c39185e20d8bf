// Package logthrottle bounds how many log lines of one kind reach the
// log. Whoever can reach a node's ports decides how often some lines are
// written: every junk packet on the gossip port is an error from
// memberlist, every beat to a dead peer a warning from Raft. Unbounded,
// they fill a disk; bounded, they still say what happens and how often.
//
// A Writer sits between a logger and its output and sees whole lines. A
// line's kind is its beginning with the digits taken out (timestamps,
// addresses, counts and indexes differ between lines of one kind; the
// level, the logger's name and the message do not). Of each kind, Burst
// lines pass in each Window; the rest are counted, and when the window
// has passed one line per kind reports how many were dropped, with the
// last one dropped.
package logthrottle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

const (
	// Burst lines of a kind pass in each Window.
	Burst = 10
	// Window is the period over which lines are counted.
	Window = 10 * time.Second
	// keyLen is how much of a line, digits taken out, makes its kind.
	keyLen = 96
	// maxKinds bounds the kinds tracked in one window; lines of further
	// kinds share one count.
	maxKinds = 1024
)

type kind struct {
	passed, dropped int
	last            []byte // the last line dropped
}

// Writer throttles the lines written to it; it is safe for concurrent
// use, as a logger's output must be.
type Writer struct {
	out  io.Writer
	json bool
	now  func() time.Time

	mu    sync.Mutex
	start time.Time
	kinds map[string]*kind
}

// New returns a Writer that writes to out, its own lines in hclog's text
// format, or as JSON objects when json is set.
func New(out io.Writer, json bool) *Writer {
	return &Writer{out: out, json: json, now: time.Now, kinds: map[string]*kind{}}
}

// Write writes p (one or more whole lines, as loggers write) unless its
// kind has used its lines for this window.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if now.Sub(w.start) >= Window {
		w.report()
		w.start = now
		clear(w.kinds)
	}
	key := kindOf(p)
	k := w.kinds[key]
	if k == nil {
		if len(w.kinds) >= maxKinds {
			key = ""
			k = w.kinds[key]
		}
		if k == nil {
			k = &kind{}
			w.kinds[key] = k
		}
	}
	if k.passed < Burst {
		k.passed++
		return w.out.Write(p)
	}
	k.dropped++
	k.last = append(k.last[:0], p...)
	return len(p), nil
}

// report writes, for each kind that dropped lines in the window now
// ending, how many, and the last of them.
func (w *Writer) report() {
	for _, k := range w.kinds {
		if k.dropped == 0 {
			continue
		}
		w.out.Write(w.line(k))
	}
}

// line is the report of one kind's dropped lines.
func (w *Writer) line(k *kind) []byte {
	const msg = "log lines dropped: at most %d lines of a kind are written in %s"
	last := string(bytes.TrimRight(k.last, "\n"))
	ts := w.now().Format("2006-01-02T15:04:05.000Z0700")
	if w.json {
		b, _ := json.Marshal(map[string]any{
			"@level": "warn", "@module": "logthrottle", "@timestamp": ts,
			"@message": fmt.Sprintf(msg, Burst, Window), "dropped": k.dropped, "last": last,
		})
		return append(b, '\n')
	}
	return fmt.Appendf(nil, "%s [WARN]  logthrottle: "+msg+": dropped=%d last=%q\n", ts, Burst, Window, k.dropped, last)
}

// kindOf is the beginning of a line without its digits.
func kindOf(p []byte) string {
	var b [keyLen]byte
	n := 0
	for _, c := range p {
		if n == keyLen || c == '\n' {
			break
		}
		if c < '0' || c > '9' {
			b[n] = c
			n++
		}
	}
	return string(b[:n])
}

var _ io.Writer = (*Writer)(nil)
