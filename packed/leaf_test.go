package packed

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLeafOps checks the floating-run leaf against a plain slice, with
// order keys (INT32/FLOAT32) and with split arrays.
func TestLeafOps(t *testing.T) {
	t.Run("okeys", func(t *testing.T) { testLeafOps[int32, float32](t, func(v int32) int32 { return v }) })
	t.Run("split", func(t *testing.T) { testLeafOps[int64, float64](t, func(v int32) int64 { return int64(v) }) })
}

func testLeafOps[M int32 | int64, S score](t *testing.T, mem func(int32) M) {
	r := rand.New(rand.NewPCG(testSeed(t), 3))
	// from fills a source leaf with k fresh entries and returns them.
	from := func(k int) (*leaf[M, S], []M) {
		src := newLeaf[M, S](k + r.IntN(4))
		src.recenter(r.IntN(src.capacity() - k + 1))
		vs := make([]M, k)
		for i := range vs {
			vs[i] = mem(r.Int32())
			src.insertAt(i, vs[i], S(vs[i]))
		}
		return src, vs
	}
	for range 200 {
		l := newLeaf[M, S](1 + r.IntN(16))
		var want []M
		for range 200 {
			n := len(want)
			switch op := r.IntN(6); {
			case op < 2 && n < l.capacity():
				i, v := r.IntN(n+1), mem(r.Int32())
				l.insertAt(i, v, S(v))
				want = slices.Insert(want, i, v)
			case op == 2 && n > 0:
				i := r.IntN(n)
				j := i + r.IntN(n-i+1)
				l.removeRange(i, j)
				want = slices.Delete(want, i, j)
			case op == 3 && n > 0:
				i, j := r.IntN(n), r.IntN(n)
				v := want[i]
				l.move(i, j, S(v))
				want = slices.Insert(slices.Delete(want, i, i+1), j, v)
			case op == 4 && n < l.capacity():
				k := r.IntN(l.capacity() - n + 1)
				src, vs := from(k + 2)
				l.appendFrom(src, 1, k+1)
				want = append(want, vs[1:k+1]...)
			case op == 5 && n < l.capacity():
				k := r.IntN(l.capacity() - n + 1)
				src, vs := from(k + 2)
				l.prependFrom(src, 1, k+1)
				want = append(slices.Clone(vs[1:k+1]), want...)
			}
			if l.n() != len(want) {
				t.Fatalf("leaf holds %d, want %d", l.n(), len(want))
			}
			for i, v := range want {
				if l.key(i) != v || l.score(i) != S(v) {
					t.Fatalf("entry %d is (%v, %v), want (%v, %v)", i, l.score(i), l.key(i), S(v), v)
				}
			}
		}
	}
}
