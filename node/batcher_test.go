package node

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every caller of a batcher gets the result of a run that started after
// it called, no more than maxRounds runs are under way at once, and
// concurrent callers share runs.
func TestBatcherRunsStartAfterTheirCallers(t *testing.T) {
	var (
		seq            atomic.Uint64 // run number, returned as the index
		inflight, peak atomic.Int64
		mu             sync.Mutex
		started        = map[uint64]time.Time{}
	)
	b := &batcher{fn: func() (uint64, error) {
		n := seq.Add(1)
		mu.Lock()
		started[n] = time.Now()
		mu.Unlock()
		cur := inflight.Add(1)
		for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
		}
		time.Sleep(2 * time.Millisecond)
		inflight.Add(-1)
		return n, nil
	}}
	const callers = 400
	var wg sync.WaitGroup
	errs := make(chan string, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i%20) * 500 * time.Microsecond)
			called := time.Now()
			run, _, err := b.do(context.Background())
			if err != nil {
				errs <- err.Error()
				return
			}
			mu.Lock()
			s := started[run]
			mu.Unlock()
			if s.Before(called) {
				errs <- "a caller got the result of a run that started before it called"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if p := peak.Load(); p > maxRounds {
		t.Fatalf("%d runs at once, more than %d", p, maxRounds)
	}
	if n := seq.Load(); n >= callers {
		t.Fatalf("%d runs for %d callers: none shared", n, callers)
	}
	t.Logf("%d callers, %d runs, at most %d at once", callers, seq.Load(), peak.Load())
}

// With a limit, callers without a deadline of their own give up with
// ErrTimeout once the run they joined is limit old, counted from when the
// first of them set it up: one that joins it later waits less. A run that
// ends in time answers.
func TestBatcherLimitBoundsCallersWithoutDeadline(t *testing.T) {
	const limit = 200 * time.Millisecond
	release := make(chan struct{})
	b := &batcher{limit: limit, fn: func() (uint64, error) {
		<-release
		return 7, nil
	}}
	type answer struct {
		err      error
		deadline time.Time
		waited   time.Duration
	}
	call := func(after time.Duration) chan answer {
		out := make(chan answer, 1)
		go func() {
			time.Sleep(after)
			start := time.Now()
			_, deadline, err := b.do(context.Background())
			out <- answer{err, deadline, time.Since(start)}
		}()
		return out
	}
	start := time.Now()
	a := call(0)             // its run starts at once, and does not end
	bc := call(limit / 4)    // sets up the next run, which waits for the first
	c := call(limit * 3 / 4) // joins that run later
	for name, ch := range map[string]chan answer{"first": a, "second": bc, "third": c} {
		var got answer
		select {
		case got = <-ch:
		case <-time.After(10 * limit):
			close(release)
			t.Fatalf("%s caller still waiting %v after the start, past the limit %v", name, time.Since(start), limit)
		}
		if !errors.Is(got.err, ErrTimeout) {
			t.Fatalf("%s caller: %v, want ErrTimeout", name, got.err)
		}
		if got.waited > limit+limit/4 {
			t.Fatalf("%s caller waited %v, more than the limit %v", name, got.waited, limit)
		}
		if name == "third" && got.waited > limit*3/4 {
			t.Fatalf("a caller that joined a run %v after it was set up waited %v, want about %v", limit/2, got.waited, limit/2)
		}
		if d := got.deadline.Sub(start); name != "first" && (d < limit || d > limit*3/2) {
			t.Fatalf("%s caller's run has its deadline %v after the start, want %v", name, d, limit+limit/4)
		}
	}
	close(release)

	index, _, err := b.do(context.Background())
	if err != nil || index != 7 {
		t.Fatalf("a run that ended in time answered %d, %v", index, err)
	}
}
