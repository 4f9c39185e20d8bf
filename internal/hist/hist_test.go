package hist

import (
	"sort"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

func TestBucketsCoverValues(t *testing.T) {
	prev := uint64(0)
	for i := 0; i < numBuckets; i++ {
		u := upper(i)
		if u <= prev {
			t.Fatalf("bucket %d: upper %d not above %d", i, u, prev)
		}
		prev = u
	}
	for _, ns := range []uint64{0, 1, 1023, 1024, 1100, 4095, 4096, 1e6, 1e9, 1 << 35, 1<<36 - 1} {
		i := index(ns)
		if ns >= upper(i) {
			t.Errorf("%d ns in bucket %d, whose upper bound is %d", ns, i, upper(i))
		}
		if i > 0 && ns < upper(i-1) {
			t.Errorf("%d ns in bucket %d but below the previous bucket's bound %d", ns, i, upper(i-1))
		}
	}
}

// TestPercentileWithinBucketWidth compares percentiles with the exact
// ones of random durations.
func TestPercentileWithinBucketWidth(t *testing.T) {
	r := testutil.Rand(t, 1)
	var h Histogram
	var all []time.Duration
	for range 20000 {
		d := time.Duration(r.ExpFloat64() * float64(50*time.Microsecond))
		d += 2 * time.Microsecond
		h.Record(d)
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	s := h.Snapshot()
	if s.Count != uint64(len(all)) {
		t.Fatalf("count %d, want %d", s.Count, len(all))
	}
	for _, q := range []float64{50, 90, 99, 99.9} {
		exact := all[int(q/100*float64(len(all)))-1]
		got := s.Percentile(q)
		if got < exact || float64(got) > float64(exact)*(1+2.0/subBuckets) {
			t.Errorf("p%g = %v, exact %v", q, got, exact)
		}
	}
}

func TestCumulative(t *testing.T) {
	var h Histogram
	h.Record(3 * time.Microsecond)  // below 4.096 µs
	h.Record(10 * time.Microsecond) // below 16.384 µs
	h.Record(time.Second)
	c := h.Snapshot().Cumulative()
	want := map[float64]uint64{Bounds[0]: 1, Bounds[1]: 2, Bounds[len(Bounds)-1]: 3}
	for le, n := range want {
		if c[le] != n {
			t.Errorf("le %g: %d, want %d", le, c[le], n)
		}
	}
	h.Reset()
	if h.Snapshot().Count != 0 || h.Count() != 0 {
		t.Error("Reset left counts")
	}
}
