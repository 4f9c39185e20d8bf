package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
)

// The Wikimedia-like replay: N `ZINCRBY key 1 <page-id>` commands whose
// page IDs follow the statistics of the seeds' 2,000,000-edit prefix
// (279,458 distinct pages, the busiest edited 11,792 times). The counts
// follow a Zipf law c(i) = max·i^-s, with s chosen so that they add up to
// exactly N; the sequence is those counts shuffled. Everything derives
// from the seed through splitmix64, so every engine (and every run, Go
// version and machine) gets the same commands, and the expected final
// state is known without asking any engine.

// Defaults: the seeds' prefix.
const (
	wikiN       = 2_000_000
	wikiMembers = 279_458
	wikiMax     = 11_792
	wikiIDRange = 80_000_000 // page IDs are drawn from [1, wikiIDRange): INT32
)

// wikiSpec describes one replay. Members and Max default to the seeds'
// statistics scaled by N/2,000,000.
type wikiSpec struct {
	N       int
	Members int
	Max     int
	Seed    uint64
}

func (s wikiSpec) withDefaults() wikiSpec {
	scale := float64(s.N) / wikiN
	if s.Members == 0 {
		s.Members = max(1, int(math.Round(wikiMembers*scale)))
	}
	if s.Max == 0 {
		s.Max = max(1, int(math.Round(wikiMax*scale)))
	}
	s.Members = min(s.Members, s.N)
	s.Max = min(max(s.Max, (s.N+s.Members-1)/s.Members), s.N-s.Members+1)
	return s
}

// wiki is a generated replay.
type wiki struct {
	spec   wikiSpec
	ids    []int32  // page ID of member i (in count order: ids[0] is busiest)
	counts []int32  // final score of member i
	seq    []uint32 // member index of each command, in order
}

// splitmix64 is the generator behind every random choice in the tool: tiny,
// stateless between runs, and fixed forever (unlike math/rand's streams).
type splitmix64 uint64

func (r *splitmix64) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a uniform integer in [0, n) (Lemire's method, unbiased).
func (r *splitmix64) intn(n uint64) uint64 {
	for {
		hi, lo := mulhilo(r.next(), n)
		if lo >= n || lo >= -n%n {
			return hi
		}
	}
}

func mulhilo(a, b uint64) (uint64, uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t&mask32 + a0*b1
	return a1*b1 + t>>32 + w1>>32, a * b
}

// newWiki generates the replay for spec.
func newWiki(spec wikiSpec) *wiki {
	spec = spec.withDefaults()
	w := &wiki{spec: spec}
	w.counts = zipfCounts(spec.N, spec.Members, spec.Max)

	rng := splitmix64(spec.Seed ^ 0x5eed_0f_9a9e)
	seen := make(map[int32]struct{}, spec.Members)
	w.ids = make([]int32, 0, spec.Members)
	for len(w.ids) < spec.Members {
		id := int32(1 + rng.intn(wikiIDRange-1))
		if _, dup := seen[id]; !dup {
			seen[id] = struct{}{}
			w.ids = append(w.ids, id)
		}
	}

	w.seq = make([]uint32, 0, spec.N)
	for i, c := range w.counts {
		for range c {
			w.seq = append(w.seq, uint32(i))
		}
	}
	for i := len(w.seq) - 1; i > 0; i-- { // Fisher–Yates
		j := rng.intn(uint64(i + 1))
		w.seq[i], w.seq[j] = w.seq[j], w.seq[i]
	}
	return w
}

// zipfCounts returns members counts, non-increasing, each ≥ 1, the first
// equal to top, adding up to exactly n: round(top·i^-s) with s found by
// bisection, then the rounding remainder spread one by one.
func zipfCounts(n, members, top int) []int32 {
	count := func(i int, s float64) int {
		c := int(math.Round(float64(top) * math.Exp(-s*math.Log(float64(i+1)))))
		return max(1, min(c, top))
	}
	total := func(s float64) int {
		sum := 0
		for i := range members {
			sum += count(i, s)
		}
		return sum
	}
	lo, hi := 0.0, 8.0 // total(lo) ≥ n ≥ total(hi)
	for range 48 {
		mid := (lo + hi) / 2
		if total(mid) > n {
			lo = mid
		} else {
			hi = mid
		}
	}
	counts := make([]int32, members)
	sum := 0
	for i := range counts {
		counts[i] = int32(count(i, hi))
		sum += int(counts[i])
	}
	// Add the remainder where it keeps the counts non-increasing: on the
	// first member whose predecessor is larger, sweeping repeatedly.
	for sum < n {
		moved := false
		for i := 1; i < members && sum < n; i++ {
			if counts[i] < counts[i-1] {
				counts[i]++
				sum++
				moved = true
			}
		}
		if !moved {
			break // every count equals top: n was out of reach
		}
	}
	return counts
}

// stats are the final state of the replayed key, as checked.
type stats struct {
	Members int     `json:"members"`
	Sum     float64 `json:"sum"`
	Max     float64 `json:"max"`
	Digest  string  `json:"digest"`
}

// expected returns the final state after the first n commands.
func (w *wiki) expected(n int) stats {
	scores := make([]float64, len(w.ids))
	for _, m := range w.seq[:n] {
		scores[m]++
	}
	pairs := make([]pair, 0, len(scores))
	for i, s := range scores {
		if s > 0 {
			pairs = append(pairs, pair{int64(w.ids[i]), s})
		}
	}
	return summarize(pairs)
}

// pair is one member of a numeric-member zset and its score.
type pair struct {
	member int64
	score  float64
}

// summarize computes count, sum, max and a digest of a mapping. The digest
// is SHA-256 over (member, score) in numeric member order, so it does not
// depend on how an engine orders ties.
func summarize(pairs []pair) stats {
	slices.SortFunc(pairs, func(a, b pair) int {
		switch {
		case a.member < b.member:
			return -1
		case a.member > b.member:
			return 1
		}
		return 0
	})
	h := sha256.New()
	var st stats
	var buf []byte
	for i, p := range pairs {
		st.Sum += p.score
		if i == 0 || p.score > st.Max {
			st.Max = p.score
		}
		buf = strconv.AppendInt(buf[:0], p.member, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendFloat(buf, p.score, 'g', -1, 64)
		buf = append(buf, '\n')
		h.Write(buf)
	}
	st.Members = len(pairs)
	st.Digest = hex.EncodeToString(h.Sum(nil)[:12])
	return st
}

// sequenceDigest identifies the command sequence (the first n commands), so
// a report can show every engine was fed the same one.
func (w *wiki) sequenceDigest(n int) string {
	h := sha256.New()
	var b [4]byte
	for _, m := range w.seq[:n] {
		binary.LittleEndian.PutUint32(b[:], uint32(w.ids[m]))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
