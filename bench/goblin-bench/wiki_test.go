package main

import (
	"testing"
)

func TestWikiDefaultStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 2,000,000 commands")
	}
	w := newWiki(wikiSpec{N: wikiN, Seed: 1})
	st := w.expected(wikiN)
	if st.Members != wikiMembers || st.Sum != wikiN || st.Max != wikiMax {
		t.Fatalf("stats = %+v, want %d members, sum %d, max %d", st, wikiMembers, wikiN, wikiMax)
	}
	for _, id := range w.ids {
		if id <= 0 {
			t.Fatalf("page id %d is not a positive INT32", id)
		}
	}
}

func TestWikiDeterministic(t *testing.T) {
	a := newWiki(wikiSpec{N: 50_000, Seed: 7})
	b := newWiki(wikiSpec{N: 50_000, Seed: 7})
	c := newWiki(wikiSpec{N: 50_000, Seed: 8})
	if a.sequenceDigest(50_000) != b.sequenceDigest(50_000) {
		t.Fatal("same seed, different sequences")
	}
	if a.sequenceDigest(50_000) == c.sequenceDigest(50_000) {
		t.Fatal("different seeds, same sequence")
	}
	st := a.expected(50_000)
	sp := a.spec
	if st.Members != sp.Members || st.Sum != 50_000 || st.Max != float64(sp.Max) {
		t.Fatalf("stats = %+v, spec %+v", st, sp)
	}
}

func TestZipfCountsShape(t *testing.T) {
	for _, tc := range []struct{ n, members, top int }{
		{1000, 10, 500}, {10, 10, 1}, {100, 1, 100}, {7, 3, 5},
	} {
		c := zipfCounts(tc.n, tc.members, tc.top)
		sum := 0
		for i, x := range c {
			sum += int(x)
			if x < 1 || (i > 0 && x > c[i-1]) {
				t.Fatalf("%+v: counts[%d]=%d not ≥1 and non-increasing", tc, i, x)
			}
		}
		if sum != tc.n || int(c[0]) != tc.top {
			t.Fatalf("%+v: sum %d, first %d", tc, sum, c[0])
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	for i := 1; i <= 10000; i++ {
		h.add(time_us(i))
	}
	for _, q := range []struct {
		q    float64
		want int
	}{{0.5, 5000}, {0.99, 9900}, {0.999, 9990}} {
		got := h.quantile(q.q)
		w := time_us(q.want)
		if d := float64(got-w) / float64(w); d > 0.02 || d < -0.02 {
			t.Errorf("q%.3f = %v, want %v ±2%%", q.q, got, w)
		}
	}
	for v := uint64(0); v < 1<<20; v = v*3/2 + 1 {
		if b := histBucket(v); histBucket(histValue(b)) != b {
			t.Fatalf("bucket %d of %d: value %d maps to %d", b, v, histValue(b), histBucket(histValue(b)))
		}
	}
}
