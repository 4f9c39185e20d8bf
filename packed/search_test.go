package packed

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The searches against a linear scan, over sorted runs with many ties.
func TestSearches(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 4))
	c := &zcore[int32, float32, float32]{}
	for range 2000 {
		// Short runs with many ties, and long ones that take several
		// rounds of the counting search.
		n, sr, mr := r.IntN(40), 5, 9
		if r.IntN(3) == 0 {
			n, sr, mr = r.IntN(1200), 1+r.IntN(200), 1+r.IntN(2000)
		}
		ss, ks := make([]float32, n), make([]int32, n)
		for i := range ss {
			ss[i], ks[i] = float32(r.IntN(sr)), int32(r.IntN(mr)-mr/2)
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			if ss[a] != ss[b] {
				return cmp3(int32(ss[a]), int32(ss[b]))
			}
			return cmp3(ks[a], ks[b])
		})
		var s2 []float32
		var k2 []int32
		for _, j := range idx { // keys are unique in a set
			if len(s2) == 0 || s2[len(s2)-1] != ss[j] || k2[len(k2)-1] != ks[j] {
				s2, k2 = append(s2, ss[j]), append(k2, ks[j])
			}
		}
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
