// Package hist is a lock-free latency histogram cheap enough for every
// command: Record is one bits.Len64 and two atomic adds, with no lock and
// no allocation, so any number of goroutines record into one histogram.
//
// Buckets are log-linear over nanoseconds, as in HDR histograms: each
// power of two is split into subBuckets equal parts, so a bucket's width
// is at most 1/subBuckets (6.25%) of its value and a percentile read from
// the buckets is within that of the true one. Values below 1 µs share the
// first bucket and values above about 69 s the last. The same counts serve
// INFO latencystats (percentiles, Percentile) and Prometheus (cumulative
// counts at a few coarse bounds, Cumulative).
package hist

import (
	"math/bits"
	"sync/atomic"
	"time"
)

const (
	subBits    = 4
	subBuckets = 1 << subBits
	// minExp is the power of two (ns) where buckets start: 1024 ns.
	minExp = 10
	// maxExp is the power of two (ns) where they end: about 68.7 s.
	maxExp     = 36
	numBuckets = (maxExp - minExp) * subBuckets
)

// Histogram counts durations. The zero value is ready to use.
type Histogram struct {
	count  atomic.Uint64
	sum    atomic.Uint64 // nanoseconds
	counts [numBuckets]atomic.Uint64
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	ns := uint64(max(d, 0))
	h.counts[index(ns)].Add(1)
	h.sum.Add(ns)
	h.count.Add(1)
}

func index(ns uint64) int {
	if ns < 1<<minExp {
		return 0
	}
	exp := bits.Len64(ns) - 1 // 2^exp <= ns < 2^(exp+1)
	if exp >= maxExp {
		return numBuckets - 1
	}
	sub := int(ns>>(exp-subBits)) & (subBuckets - 1)
	return (exp-minExp)*subBuckets + sub
}

// upper returns the bucket's exclusive upper bound in nanoseconds.
func upper(i int) uint64 {
	exp := minExp + i/subBuckets
	sub := uint64(i%subBuckets) + 1
	return (1 << exp) + sub<<(exp-subBits)
}

// Snapshot is a histogram's counts at one moment.
type Snapshot struct {
	Count  uint64
	Sum    time.Duration
	counts [numBuckets]uint64
}

// Snapshot copies the counts. Concurrent Records may land on either side
// of the copy, so Count is the sum of the buckets copied, not the counter.
func (h *Histogram) Snapshot() *Snapshot {
	s := &Snapshot{Sum: time.Duration(h.sum.Load())}
	for i := range h.counts {
		n := h.counts[i].Load()
		s.counts[i] = n
		s.Count += n
	}
	return s
}

// Reset forgets every duration recorded.
func (h *Histogram) Reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.sum.Store(0)
	h.count.Store(0)
}

// Count returns how many durations were recorded.
func (h *Histogram) Count() uint64 { return h.count.Load() }

// Percentile returns the upper bound of the bucket holding the q-th
// percentile (0 < q <= 100), or 0 for an empty snapshot.
func (s *Snapshot) Percentile(q float64) time.Duration {
	if s.Count == 0 {
		return 0
	}
	rank := uint64(q/100*float64(s.Count) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, n := range s.counts {
		seen += n
		if seen >= rank {
			return time.Duration(upper(i))
		}
	}
	return time.Duration(upper(numBuckets - 1))
}

// Bounds are the upper bounds, in seconds, of the cumulative buckets
// Cumulative reports: powers of four from 4.096 µs to about 17 s, each a
// bucket boundary.
var Bounds = func() []float64 {
	var b []float64
	for exp := 12; exp <= 34; exp += 2 {
		b = append(b, float64(uint64(1)<<exp)/1e9)
	}
	return b
}()

// Cumulative returns, for each of Bounds, how many durations were below
// it (Prometheus's "le" buckets).
func (s *Snapshot) Cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(Bounds))
	var seen uint64
	i := 0
	for _, le := range Bounds {
		limit := uint64(le*1e9 + 0.5)
		for i < numBuckets && upper(i) <= limit {
			seen += s.counts[i]
			i++
		}
		out[le] = seen
	}
	return out
}
