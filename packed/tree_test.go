package packed

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// Ascending and descending loads split at the insertion point and fill
// leaves completely; removing everything collapses the tree again.
func TestTreeSequentialLoadsAndCollapse(t *testing.T) {
	for _, desc := range []bool{false, true} {
		z := newWithCaps(Int32Float32, 16, 4)
		const n = 4000
		for i := range n {
			v := i
			if desc {
				v = n - i
			}
			z.Add([]byte(strconv.Itoa(v)), float64(v), 0)
		}
		st := z.Stats()
		if fill := float64(st.Len) / float64(st.LeafSlots); fill < 0.99 {
			t.Errorf("descending %v: sequential load left leaves %.2f full", desc, fill)
		}
		if st.Height < 4 {
			t.Errorf("height %d for %d members with fanout 4", st.Height, n)
		}
		for i := range n {
			v := i
			if desc {
				v = n - i
			}
			if !z.Remove([]byte(strconv.Itoa(v))) {
				t.Fatalf("%d missing", v)
			}
			if i%97 == 0 {
				if err := z.Check(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if st := z.Stats(); st.Height != 0 || st.Leaves != 0 || z.Bytes() > 200 {
			t.Errorf("emptied tree: %+v, %d bytes", st, z.Bytes())
		}
	}
}

// Rank and select agree over a deep tree.
func TestRankSelect(t *testing.T) {
	z := newWithCaps(Int64Float64, 4, 4)
	for i := range 3000 {
		z.Add([]byte(strconv.Itoa(i*7919%3001)), float64(i%13), 0)
	}
	r := 0
	z.Range(0, z.Len(), false, func(m []byte, s float64) bool {
		got, gs, ok := z.Rank(m)
		if !ok || got != r || gs != s {
			t.Fatalf("rank of %s = %d, want %d", m, got, r)
		}
		var sel string
		z.Range(r, r+1, false, func(m []byte, _ float64) bool { sel = string(m); return false })
		if sel != string(m) {
			t.Fatalf("select(%d) = %s, want %s", r, sel, m)
		}
		r++
		return true
	})
}

// Trees deeper than a path holds inline (pathInline levels) take their
// deeper levels from the path's overflow: ascending loads into leaves and
// branches of four grow one past it, then random rescores, insertions and
// removals run against a map, with the invariants checked as they go.
func TestDeepPaths(t *testing.T) {
	if invariants {
		t.Skip("checks the invariants itself every 4,000 operations; -tags invariants would check a 25,000-member tree after every one")
	}
	seed := testutil.Seed(t)
	for _, l := range []Layout{Int32Float32, Standard} {
		t.Run(l.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(l)))
			z := newWithCaps(l, 4, 4)
			want := map[string]float64{}
			next := 0
			add := func(m string, s float64) {
				if _, err := z.Add([]byte(m), s, 0); err != nil {
					t.Fatal(err)
				}
				want[m] = s
			}
			for z.Stats().Height <= pathInline+1 {
				for range 1000 {
					add(strconv.Itoa(next), float64(next))
					next++
				}
			}
			t.Logf("%d members, height %d", z.Len(), z.Stats().Height)
			deep := 0 // operations run on a tree taller than the inline path
			for op := range 20000 {
				if op%100 == 0 && z.Stats().Height > pathInline {
					deep += 100
				}
				m := strconv.Itoa(r.IntN(next + 100))
				switch r.IntN(4) {
				case 0:
					z.Remove([]byte(m))
					delete(want, m)
				default:
					add(m, float64(r.IntN(2*next)))
				}
				if op%4000 == 0 {
					if err := z.Check(); err != nil {
						t.Fatalf("op %d: %v", op, err)
					}
				}
				if s, ok := want[m]; ok {
					if _, got, found := z.Rank([]byte(m)); !found || got != s {
						t.Fatalf("op %d: Rank(%s) = %v, %v; want score %v", op, m, got, found, s)
					}
				}
			}
			if err := z.Check(); err != nil {
				t.Fatal(err)
			}
			if z.Len() != len(want) {
				t.Fatalf("%d members, want %d", z.Len(), len(want))
			}
			prev, n := math.Inf(-1), 0
			z.Range(0, z.Len(), false, func(m []byte, s float64) bool {
				if want[string(m)] != s || s < prev {
					t.Fatalf("rank %d: %s %v out of order or wrong (want %v)", n, m, s, want[string(m)])
				}
				prev, n = s, n+1
				return true
			})
			if t.Logf("%d operations on a tree taller than %d levels", deep, pathInline); deep < 1000 {
				t.Fatal("the test no longer works past the inline path for long")
			}
		})
	}
}
