package yield

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// On one thread, the goroutines that can run all run before WhileGrowing
// returns; it stops at enough without yielding, and at max.
func TestWhileGrowing(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var n atomic.Int64
	const runnable = 20
	for range runnable {
		go n.Add(1)
	}
	count := func() int { return int(n.Load()) }
	WhileGrowing(count, 0, 0)
	if got := count(); got != runnable {
		t.Errorf("%d of %d runnable goroutines ran before WhileGrowing returned", got, runnable)
	}

	calls := 0
	WhileGrowing(func() int { calls++; return 5 }, 5, 0)
	if calls != 1 {
		t.Errorf("count already at enough: counted %d times, want 1 (no yield)", calls)
	}

	calls = 0
	WhileGrowing(func() int { calls++; return calls }, 0, 3)
	if calls != 4 {
		t.Errorf("count growing on every yield, max 3: counted %d times, want 4", calls)
	}
}
