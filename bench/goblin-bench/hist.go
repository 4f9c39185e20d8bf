package main

import (
	"math/bits"
	"time"
)

// hist is a log-linear latency histogram in nanoseconds: exact below 128
// ns, then 64 buckets per power of two, so a reported percentile is within
// 1.6% of the true value. It is a plain array (nothing for the garbage
// collector to scan) and costs one increment per sample.
type hist struct {
	counts [histBuckets]uint64
	n      uint64
	max    uint64
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits
	histBuckets = (64-histSubBits)*histSub/2 + histSub
)

func histBucket(v uint64) int {
	if v < histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits
	return shift*histSub/2 + int(v>>shift)
}

// histValue returns the middle of bucket i.
func histValue(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	shift := i/(histSub/2) - 1
	m := uint64(i - shift*histSub/2)
	return m<<shift + (uint64(1)<<shift)/2
}

func (h *hist) add(d time.Duration) { h.addN(d, 1) }

// addN records n samples of d (a pipelined batch's replies all wait the
// batch's round trip).
func (h *hist) addN(d time.Duration, n int) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	h.counts[histBucket(v)] += uint64(n)
	h.n += uint64(n)
	if v > h.max {
		h.max = v
	}
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	if o.max > h.max {
		h.max = o.max
	}
}

// quantile returns the q-quantile (0 < q ≤ 1).
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := histValue(i)
			if v > h.max {
				v = h.max
			}
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
