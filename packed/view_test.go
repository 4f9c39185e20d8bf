package packed

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// A view is frozen: a randomized model test takes views of a set (with a
// deep copy, Clone, at the same moment) while the set goes on with every
// kind of write (additions with every flag, rescores, widening, removals,
// range removals, pops from the front, arena compactions and chunk
// evacuations), and checks at random times that every view still holds
// exactly its copy's entries and encodes to exactly its copy's bytes,
// and that the set passes Check.
func TestViewIsFrozen(t *testing.T) {
	seed := testutil.Seed(t)
	for _, l := range allLayouts {
		for _, limit := range []int{compactLimit, 0} {
			t.Run(fmt.Sprintf("%v/compact%d", l, limit), func(t *testing.T) {
				old := compactLimit
				compactLimit = limit
				defer func() { compactLimit = old }()
				r := rand.New(rand.NewPCG(seed, uint64(l)<<8|uint64(min(limit, 1))))
				runViewModel(t, r, l, 4000, 30000)
			})
		}
	}
}

func runViewModel(t *testing.T, r *rand.Rand, l Layout, pool, ops int) {
	type frozen struct {
		v    *View
		copy *ZSet
		at   int
	}
	g := newGen(r, l, pool)
	z := newWithCaps(l, 4+r.IntN(12), 4)
	var views []frozen
	check := func(op int) {
		t.Helper()
		if err := z.Check(); err != nil {
			t.Fatalf("op %d: the set: %v", op, err)
		}
		for _, f := range views {
			want, got := entriesOf(f.copy), render(f.v.Each)
			if f.v.Len() != f.copy.Len() || f.v.Layout() != f.copy.Layout() || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("op %d: the view taken at op %d changed: %d members (%v), want %d (%v)", op, f.at, f.v.Len(), f.v.Layout(), f.copy.Len(), f.copy.Layout())
			}
			var a, b bytes.Buffer
			if err := f.v.EncodeTo(&a); err != nil {
				t.Fatal(err)
			}
			if err := f.copy.EncodeTo(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("op %d: the view taken at op %d encodes differently from its copy", op, f.at)
			}
			d, err := Decode(bufio.NewReader(&a))
			if err != nil || d.Check() != nil || fmt.Sprint(entriesOf(d)) != fmt.Sprint(want) {
				t.Fatalf("op %d: the view taken at op %d does not decode to its copy: %v", op, f.at, err)
			}
		}
	}
	for op := range ops {
		switch x := r.IntN(100); {
		case x < 55:
			z.Add([]byte(g.member()), g.score(), g.flags())
		case x < 80:
			z.Remove([]byte(g.member()))
		case x < 83 && z.Len() > 0:
			i := r.IntN(z.Len())
			z.RemoveRange(i, i+1+r.IntN(min(z.Len()-i, 40)))
		case x < 88 && z.Len() > 0:
			z.RemoveRange(0, 1+r.IntN(min(z.Len(), 3)))
		case x < 89:
			views = append(views, frozen{z.Snapshot(), z.Clone(), op})
			if len(views) > 4 {
				views = views[1:]
			}
		case x < 90:
			check(op)
		}
	}
	check(ops)
}
