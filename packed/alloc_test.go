package packed

import (
	"runtime"
	"testing"
)

var sink []byte

// allocSize must agree with what the runtime really allocates.
func TestAllocSizeMatchesRuntime(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	var before, after runtime.MemStats
	for _, n := range []int{1, 8, 24, 100, 500, 1000, 2048, 3000, 9000, 30000, 40000, 100000} {
		// Another goroutine of the process (the test runner's, other
		// tests') can allocate between the two readings, which only adds:
		// the fewest bytes of a few tries is the allocation's own.
		got := -1
		for range 5 {
			runtime.ReadMemStats(&before)
			sink = make([]byte, n)
			runtime.ReadMemStats(&after)
			if d := int(after.TotalAlloc - before.TotalAlloc); got < 0 || d < got {
				got = d
			}
		}
		if got != allocSize(uintptr(n), false) {
			t.Errorf("make([]byte, %d) allocated %d, allocSize says %d", n, got, allocSize(uintptr(n), false))
		}
	}
}
