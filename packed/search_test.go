package packed

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// The searches against a linear scan, over sorted runs with many ties.
func TestSearches(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 4))
	c := &zcore[int32, float32, float32]{}
	for range 2000 {
		// Short runs with many ties, and long ones that take several
		// four-way steps.
		n, sr, mr := r.IntN(40), 5, 9
		if r.IntN(3) == 0 {
			n, sr, mr = r.IntN(1200), 1+r.IntN(200), 1+r.IntN(2000)
		}
		ss, ks := make([]float32, n), make([]int32, n)
		for i := range ss {
			ss[i], ks[i] = float32(r.IntN(sr)), int32(r.IntN(mr)-mr/2)
		}
		k2, s2 := sortedRun(ks, ss, cmp3[int32])
		s, m := float32(r.IntN(sr+1)-1), int32(r.IntN(mr+2)-mr/2-1)
		for _, upper := range []bool{false, true} {
			want := 0
			for i := range s2 {
				if s2[i] < s || s2[i] == s && (k2[i] < m || upper && k2[i] == m) {
					want = i + 1
				}
			}
			if got := c.keyBound(k2, s2, s, &probe[int32]{m: m}, upper); got != want {
				t.Fatalf("keyBound(%v, %v, upper %v) over %v %v = %d, want %d", s, m, upper, s2, k2, got, want)
			}
		}
	}
}

// pairBound2 finds both keys where pairBound finds each, over runs of
// different lengths (empty and one-entry runs among them).
func TestPairBound2(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 5))
	run := func() ([]int64, []float64) {
		n := runLen(r, 6, 700)
		ss, ks := make([]float64, n), make([]int64, n)
		for i := range ss {
			ss[i], ks[i] = float64(r.IntN(1+n/8)), int64(r.IntN(50))
			if r.IntN(8) == 0 { // the extremes, where m+1 overflows
				ks[i] = []int64{math.MaxInt64, math.MinInt64}[r.IntN(2)]
			}
		}
		return sortedRun(ks, ss, cmp3[int64])
	}
	for range 5000 {
		k1, s1 := run()
		k2, s2 := k1, s1
		if r.IntN(2) == 0 {
			k2, s2 = run()
		}
		a, b := float64(r.IntN(90)-1), float64(r.IntN(90)-1)
		m1, m2 := int64(r.IntN(52)-1), int64(r.IntN(52)-1)
		if r.IntN(4) == 0 {
			m1 = math.MaxInt64
		}
		if r.IntN(4) == 0 {
			m2 = []int64{math.MaxInt64, math.MinInt64}[r.IntN(2)]
		}
		for _, upper := range []bool{false, true} {
			i, j := pairBound2(k1, s1, a, m1, k2, s2, b, m2, upper)
			wi, wj := pairBound(k1, s1, a, m1, upper), pairBound(k2, s2, b, m2, upper)
			if li, lj := linearBound(k1, s1, a, m1, upper), linearBound(k2, s2, b, m2, upper); wi != li || wj != lj {
				t.Fatalf("pairBound upper %v: (%v,%v) in %v %v = %d, want %d; (%v,%v) in %d = %d, want %d",
					upper, a, m1, s1, k1, wi, li, b, m2, len(s2), wj, lj)
			}
			if i != wi || j != wj {
				t.Fatalf("pairBound2 upper %v: (%v,%v) in %d entries and (%v,%v) in %d = %d, %d; want %d, %d",
					upper, a, m1, len(s1), b, m2, len(s2), i, j, wi, wj)
			}
		}
	}
}

// uuidBound2 finds both keys where a linear scan finds each.
func TestUUIDBound2(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 6))
	less := func(s1 float32, k1 uuid, s2 float32, k2 uuid, orEq bool) bool {
		if s1 != s2 {
			return s1 < s2
		}
		if k1[0] != k2[0] {
			return k1[0] < k2[0]
		}
		return k1[1] < k2[1] || orEq && k1[1] == k2[1]
	}
	run := func() ([]uuid, []float32) {
		n := runLen(r, 5, 300)
		ks, ss := make([]uuid, n), make([]float32, n)
		for i := range ks {
			ss[i], ks[i] = float32(r.IntN(4)), uuid{uint64(r.IntN(3)), uint64(r.IntN(40))}
		}
		return sortedRun(ks, ss, func(a, b uuid) int {
			if c := cmp3(a[0], b[0]); c != 0 {
				return c
			}
			return cmp3(a[1], b[1])
		})
	}
	count := func(ks []uuid, ss []float32, s float32, m uuid, upper bool) int {
		n := 0
		for i := range ks {
			if less(ss[i], ks[i], s, m, upper) {
				n++
			}
		}
		return n
	}
	for range 5000 {
		k1, s1 := run()
		k2, s2 := run()
		m := uuid{uint64(r.IntN(4)), uint64(r.IntN(42))}
		a, b := float32(r.IntN(6)-1), float32(r.IntN(6)-1)
		for _, upper := range []bool{false, true} {
			i, j := uuidBound2(k1, s1, a, k2, s2, b, m, upper)
			if wi, wj := count(k1, s1, a, m, upper), count(k2, s2, b, m, upper); i != wi || j != wj {
				t.Fatalf("uuidBound2 upper %v = %d, %d; want %d, %d", upper, i, j, wi, wj)
			}
		}
	}
}

// runLen returns a run length below short or, half the time, below long:
// runs short enough for the searches' edge cases and long enough for
// several four-way steps.
func runLen(r *rand.Rand, short, long int) int {
	n := r.IntN(short)
	if r.IntN(2) == 0 {
		n = r.IntN(long)
	}
	return n
}

// linearBound is pairBound by counting the entries before the key.
func linearBound(ks []int64, ss []float64, s float64, m int64, upper bool) int {
	n := 0
	for i := range ss {
		if ss[i] < s || ss[i] == s && (ks[i] < m || upper && ks[i] == m) {
			n++
		}
	}
	return n
}

// sortedRun returns the entries (ss[i], ks[i]) ordered by score, then by
// member with cmpM, without duplicate keys: a run as a leaf holds it.
func sortedRun[K comparable, S score](ks []K, ss []S, cmpM func(a, b K) int) ([]K, []S) {
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(ss[a], ss[b]); c != 0 {
			return c
		}
		return cmpM(ks[a], ks[b])
	})
	var k2 []K
	var s2 []S
	for _, j := range idx {
		if len(s2) == 0 || s2[len(s2)-1] != ss[j] || k2[len(k2)-1] != ks[j] {
			s2, k2 = append(s2, ss[j]), append(k2, ks[j])
		}
	}
	return k2, s2
}

// scoreBounds finds the run of tied scores a linear count finds, and
// lowerBound its start.
func TestScoreBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 7))
	for range 5000 {
		n := runLen(r, 10, 1100)
		sr := 1 + r.IntN(1+n/4)
		ss := make([]float64, n)
		for i := range ss {
			ss[i] = float64(r.IntN(sr))
		}
		slices.Sort(ss)
		s := float64(r.IntN(sr+2) - 1)
		wlo, whi := 0, 0
		for _, x := range ss {
			wlo += int(b2u(x < s))
			whi += int(b2u(x <= s))
		}
		if lo, hi := scoreBounds(ss, s); lo != wlo || hi != whi {
			t.Fatalf("scoreBounds(%v) over %v = %d, %d; want %d, %d", s, ss, lo, hi, wlo, whi)
		}
		if lo := lowerBound(ss, s); lo != wlo {
			t.Fatalf("lowerBound(%v) over %v = %d; want %d", s, ss, lo, wlo)
		}
	}
}

// Standard members: keyBound against a linear count, and leafFind finds
// every entry by its reference, through short runs of ties (scanned) and
// long ones (searched by bytes).
// randomMember returns a member of up to n bytes from an alphabet with the
// extremes 0x00 and 0xff, so that members tie on their prefixes, pad to
// them (a and a\x00), and reach the largest prefix.
func randomMember(r *rand.Rand, n int) []byte {
	b := make([]byte, r.IntN(n+1))
	for i := range b {
		b[i] = "\x00\x01ab\xfe\xff"[r.IntN(6)]
	}
	return b
}

// TestMemberPrefixOrder checks that member prefixes never contradict the
// members' order: prefix(a) <= prefix(b) whenever a <= b.
func TestMemberPrefixOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 9))
	for range 100000 {
		a, b := randomMember(r, 3), randomMember(r, 3)
		if bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		if memberPrefix(a) > memberPrefix(b) {
			t.Fatalf("%q <= %q, but prefixes %#x > %#x", a, b, memberPrefix(a), memberPrefix(b))
		}
	}
}

func TestStandardSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 8))
	for range 300 {
		c := &zcore[sref, float64, struct{}]{}
		n, sr := 1+r.IntN(40), 1+r.IntN(6)
		switch r.IntN(4) {
		case 0, 1:
			n, sr = 1+r.IntN(500), 1+r.IntN(1+r.IntN(40))
		case 2: // runs longer than refScanMax, searched by bytes
			n, sr = refScanMax+1+r.IntN(600), 1+r.IntN(2)
		}
		type entry struct {
			s float64
			b []byte
		}
		seen := map[string]bool{}
		var es []entry
		for len(es) < n {
			b := randomMember(r, 5)
			if !seen[string(b)] {
				seen[string(b)] = true
				es = append(es, entry{float64(r.IntN(sr)), b})
			}
		}
		order := func(a, b entry) int {
			if c := cmp.Compare(a.s, b.s); c != 0 {
				return c
			}
			return slices.Compare(a.b, b.b)
		}
		slices.SortFunc(es, order)
		l := newLeaf[sref, float64](n)
		for _, e := range es {
			ref, _ := c.ar.add(e.b, e.s)
			l.push(ref, e.s, memberPrefix(e.b))
		}
		ks, ss := l.live()
		for i, e := range es {
			p := probe[sref]{b: e.b}
			if got := c.leafFind(l, e.s, &p, ks[i]); got != i {
				t.Fatalf("leafFind(%v %q) = %d, want %d", e.s, e.b, got, i)
			}
		}
		for range 50 {
			q := entry{float64(r.IntN(sr+2) - 1), randomMember(r, 3)}
			for _, upper := range []bool{false, true} {
				want := 0
				for _, e := range es {
					if o := order(e, q); o < 0 || upper && o == 0 {
						want++
					}
				}
				if got := c.bytesBound(ks, ss, l.prefixes(), q.s, &probe[sref]{b: q.b}, memberPrefix(q.b), upper); got != want {
					t.Fatalf("bytesBound(%v %q, upper %v) = %d, want %d", q.s, q.b, upper, got, want)
				}
			}
		}
	}
}

// TestIndexRef checks the four-at-a-time reference scan against a plain
// one on runs of every length up to 40, the reference at every position
// and absent.
func TestIndexRef(t *testing.T) {
	for n := 0; n <= 40; n++ {
		refs := make([]uint32, n)
		for i := range refs {
			refs[i] = uint32(1000 + 7*i)
		}
		for want := -1; want < n; want++ {
			r := uint32(5)
			if want >= 0 {
				r = refs[want]
			}
			if got := indexRef(refs, r); got != want {
				t.Fatalf("n=%d: indexRef found %d, want %d", n, got, want)
			}
		}
	}
}
