package packed

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestLeafOps checks the floating-run leaf against a plain slice, with
// order keys (INT32/FLOAT32), with split arrays, and with split arrays and
// member prefixes (standard), whose prefixes must move with their entries.
func TestLeafOps(t *testing.T) {
	t.Run("okeys", func(t *testing.T) { testLeafOps[int32, float32](t, func(v int32) int32 { return v }) })
	t.Run("split", func(t *testing.T) { testLeafOps[int64, float64](t, func(v int32) int64 { return int64(v) }) })
	t.Run("prefixes", func(t *testing.T) {
		testLeafOps[sref, float64](t, func(v int32) (r sref) {
			binary.LittleEndian.PutUint32(r[:], uint32(v))
			return r
		})
	})
}

// prefixOfEntry is the prefix testLeafOps gives an entry: any function of
// its member that tells entries apart.
func prefixOfEntry[M member](m M) mprefix {
	if kindOf[M]() != MemberBytes {
		return 0
	}
	r := asRef(&m)
	return mprefix(r[0]) | mprefix(r[1])<<8
}

// scoreOf is the score testLeafOps gives an entry.
func scoreOf[M member, S score](m M) S {
	if kindOf[M]() == MemberBytes {
		return S(int32(binary.LittleEndian.Uint32(asRef(&m)[:])))
	}
	return S(*asI32(&m))
}

func testLeafOps[M int32 | int64 | sref, S score](t *testing.T, mem func(int32) M) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 3))
	// from fills a source leaf with k fresh entries and returns them.
	from := func(k int) (*leaf[M, S], []M) {
		src := newLeaf[M, S](k + r.IntN(4))
		src.recenter(r.IntN(src.capacity() - k + 1))
		vs := make([]M, k)
		for i := range vs {
			vs[i] = mem(r.Int32())
			src.insertAt(i, vs[i], scoreOf[M, S](vs[i]), prefixOfEntry(vs[i]))
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
				l.insertAt(i, v, scoreOf[M, S](v), prefixOfEntry(v))
				want = slices.Insert(want, i, v)
			case op == 2 && n > 0:
				i := r.IntN(n)
				j := i + r.IntN(n-i+1)
				l.removeRange(i, j)
				want = slices.Delete(want, i, j)
			case op == 3 && n > 0:
				i, j := r.IntN(n), r.IntN(n)
				v := want[i]
				l.move(i, j, scoreOf[M, S](v))
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
				if l.key(i) != v || l.score(i) != scoreOf[M, S](v) {
					t.Fatalf("entry %d is (%v, %v), want (%v, %v)", i, l.score(i), l.key(i), scoreOf[M, S](v), v)
				}
				if kindOf[M]() == MemberBytes && l.prefixes()[i] != prefixOfEntry(v) {
					t.Fatalf("entry %d has prefix %#x, want %#x", i, l.prefixes()[i], prefixOfEntry(v))
				}
			}
		}
	}
}
