package packed

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLeafOps checks the floating-run leaf against a plain slice.
func TestLeafOps(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 3))
	for range 200 {
		l := newLeaf[int32, float32](1 + r.IntN(16))
		var want []int32
		for range 200 {
			n := len(want)
			switch op := r.IntN(6); {
			case op < 2 && n < len(l.keys):
				i, v := r.IntN(n+1), r.Int32()
				l.insertAt(i, v, float32(v))
				want = slices.Insert(want, i, v)
			case op == 2 && n > 0:
				i := r.IntN(n)
				j := i + r.IntN(n-i+1)
				l.removeRange(i, j)
				want = slices.Delete(want, i, j)
			case op == 3 && n > 0:
				i, j := r.IntN(n), r.IntN(n)
				v := want[i]
				l.move(i, j, float32(v))
				want = slices.Insert(slices.Delete(want, i, i+1), j, v)
			case op == 4 && n < len(l.keys):
				k := r.IntN(len(l.keys) - n + 1)
				vs := make([]int32, k)
				l.appendN(vs, make([]float32, k))
				want = append(want, vs...)
			case op == 5 && n < len(l.keys):
				k := r.IntN(len(l.keys) - n + 1)
				vs := make([]int32, k)
				l.prependN(vs, make([]float32, k))
				want = append(vs, want...)
			}
			ks, ss := l.live()
			if !slices.Equal(ks, want) {
				t.Fatalf("leaf %v, want %v", ks, want)
			}
			for i := range ks {
				if ss[i] != float32(ks[i]) {
					t.Fatalf("score %d out of step", i)
				}
			}
		}
	}
}
