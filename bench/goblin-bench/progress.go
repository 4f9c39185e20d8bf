package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// progress draws a progress bar for a long run on stderr: redrawn in place
// on a terminal, a line every few seconds otherwise (logs). It reads an
// atomic counter the workers bump, so it costs them nothing else.
type progress struct {
	label string
	total int64
	done  *atomic.Int64
	out   io.Writer
	tty   bool
	stop  chan struct{}
	ended chan struct{}
	start time.Time
}

func startProgress(label string, total int64, done *atomic.Int64, quiet bool) *progress {
	p := &progress{label: label, total: total, done: done, out: os.Stderr, stop: make(chan struct{}), ended: make(chan struct{}), start: time.Now()}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty = true
	}
	if quiet {
		close(p.ended)
		return p
	}
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer close(p.ended)
	every := 200 * time.Millisecond
	if !p.tty {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			if p.tty {
				p.draw()
				fmt.Fprintln(p.out)
			}
			return
		case <-t.C:
			p.draw()
		}
	}
}

func (p *progress) draw() {
	done := p.done.Load()
	frac := 0.0
	if p.total > 0 {
		frac = float64(done) / float64(p.total)
	}
	if frac > 1 {
		frac = 1
	}
	el := time.Since(p.start)
	rate := float64(done) / el.Seconds()
	const width = 30
	bar := strings.Repeat("=", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
	line := fmt.Sprintf("%-16s [%s] %5.1f%% %d/%d %.0f/s %s", p.label, bar, 100*frac, done, p.total, rate, el.Round(time.Second))
	if p.tty {
		fmt.Fprintf(p.out, "\r%s", line)
	} else {
		fmt.Fprintln(p.out, line)
	}
}

func (p *progress) end() {
	select {
	case <-p.ended:
		return
	default:
	}
	close(p.stop)
	<-p.ended
}
