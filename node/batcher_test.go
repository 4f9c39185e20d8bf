package node

import (
	"context"
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
			run, err := b.do(context.Background())
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
