package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// gen appends command number i of a workload to a worker's connection and
// reports whether it is a write.
type gen func(w *worker, i int64) bool

// worker is one client connection of a run.
type worker struct {
	c   *conn
	rng splitmix64
	h   hist
	buf []byte
}

// runOpts shape a run: how many connections, how deep each pipelines, and
// the two bounds (commands and time) of which the first reached ends it.
type runOpts struct {
	addr     string
	clients  int
	pipeline int
	requests int64
	duration time.Duration
	seed     uint64
	label    string
	quiet    bool
	readonly bool // send READONLY first on every connection
}

// runStats is what a run measured.
type runStats struct {
	ops, errs, writesOK int64
	elapsed             time.Duration
	h                   hist
	firstErr            error
}

// run drives a workload: each worker reserves the next pipeline-sized slice
// of command numbers, sends it, and reads the replies; every reply of a
// batch is charged the batch's round trip (what a pipelining client sees).
func run(ctx context.Context, o runOpts, g gen) (*runStats, error) {
	o.clients = max(o.clients, 1)
	o.pipeline = max(o.pipeline, 1)
	workers := make([]*worker, o.clients)
	for i := range workers {
		c, err := dial(o.addr)
		if err == nil && o.readonly {
			if _, err = c.do("READONLY"); err != nil {
				c.close()
			}
		}
		if err != nil {
			for _, w := range workers[:i] {
				w.c.close()
			}
			return nil, err
		}
		workers[i] = &worker{c: c, rng: splitmix64(o.seed*1_000_003 + uint64(i))}
	}
	defer func() {
		for _, w := range workers {
			w.c.close()
		}
	}()

	var next, done, errs, writesOK atomic.Int64
	var firstErr atomic.Pointer[error]
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	pb := startProgress(o.label, o.requests, &done, o.quiet)
	start := time.Now()
	var wg sync.WaitGroup
	fatal := make(chan error, len(workers))
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writes := make([]bool, o.pipeline)
			for ctx.Err() == nil {
				end := next.Add(int64(o.pipeline))
				first := end - int64(o.pipeline)
				if first >= o.requests {
					return
				}
				end = min(end, o.requests)
				n := int(end - first)
				for k := range n {
					writes[k] = g(w, first+int64(k))
				}
				t0 := time.Now()
				if err := w.c.flush(); err != nil {
					fatal <- err
					cancel()
					return
				}
				for k := range n {
					err := w.c.skip()
					var er errReply
					switch {
					case err == nil:
						if writes[k] {
							writesOK.Add(1)
						}
					case errors.As(err, &er):
						if errs.Add(1) == 1 {
							e := error(er)
							firstErr.Store(&e)
						}
					default:
						fatal <- err
						cancel()
						return
					}
				}
				w.h.addN(time.Since(t0), n)
				done.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	pb.end()
	select {
	case err := <-fatal:
		return nil, fmt.Errorf("%s: %w", o.label, err)
	default:
	}
	st := &runStats{ops: done.Load(), errs: errs.Load(), writesOK: writesOK.Load(), elapsed: elapsed}
	if p := firstErr.Load(); p != nil {
		st.firstErr = *p
	}
	for _, w := range workers {
		st.h.merge(&w.h)
	}
	return st, nil
}
