package packed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// entriesOf returns a set's entries in order, member text and score bits.
func entriesOf(z *ZSet) []string {
	return render(func(fn func(m []byte, s float64) bool) { z.Range(0, z.Len(), false, fn) })
}

// render returns the entries each visits, as entriesOf renders them.
func render(each func(fn func(m []byte, s float64) bool)) []string {
	var out []string
	each(func(m []byte, s float64) bool {
		out = append(out, fmt.Sprintf("%q %x", m, math.Float64bits(s)))
		return true
	})
	return out
}

// A clone is a deep copy: it passes Check, holds the same entries and the
// same bytes as the original, including a set caught in the middle of an
// index resize and a standard set with garbage in its arena, and neither
// set sees what is done to the other afterwards.
func TestCloneIsDeep(t *testing.T) {
	seed := testutil.Seed(t)
	for _, l := range allLayouts {
		t.Run(l.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(l)))
			g := newGen(r, l, 30000)
			z := newWithCaps(l, 6, 4)
			// Members and scores that every layout holds as it is: a
			// widened set would be a new core, and the clone would copy
			// that one's layout instead.
			member, score := g.member, g.score
			if l.Member() != MemberUUID && l.Member() != MemberBytes {
				member = func() string { return strconv.Itoa(r.IntN(30000) - 1000) }
			}
			if l.Float32Scores() {
				score = func() float64 { return float64(r.IntN(2000)) / 4 }
			}
			// Grow until an index resize is under way (past 1,500
			// members), with removals leaving garbage on the way.
			for i := 0; z.Len() < 1500 || z.Stats().IndexMoving == 0; i++ {
				if i > 200000 {
					t.Fatalf("no resize in progress after %d operations", i)
				}
				m := member()
				if r.IntN(4) == 0 {
					z.Remove([]byte(m))
					continue
				}
				if _, err := z.Add([]byte(m), score(), 0); err != nil && err != ErrNaN && err != ErrMember {
					t.Fatal(err)
				}
			}
			if z.Layout() != l {
				t.Fatalf("the set widened to %v", z.Layout())
			}
			d := z.Clone()
			if err := d.Check(); err != nil {
				t.Fatalf("seed %d: clone: %v", seed, err)
			}
			orig := entriesOf(z)
			if got := entriesOf(d); fmt.Sprint(got) != fmt.Sprint(orig) {
				t.Fatalf("seed %d: the clone's %d entries differ from the original's %d", seed, len(got), len(orig))
			}
			if z.Bytes() != d.Bytes() || z.Stats() != d.Stats() {
				t.Fatalf("seed %d: clone %+v, original %+v", seed, d.Stats(), z.Stats())
			}
			// Change every entry of the original, then the clone.
			for _, e := range entriesOf(z) {
				var m string
				fmt.Sscanf(e, "%q", &m)
				if r.IntN(2) == 0 {
					z.Remove([]byte(m))
				} else if _, err := z.Add([]byte(m), score(), 0); err != nil && err != ErrNaN && err != ErrMember {
					t.Fatal(err)
				}
			}
			if got := entriesOf(d); fmt.Sprint(got) != fmt.Sprint(orig) {
				t.Fatalf("seed %d: changing the original changed the clone", seed)
			}
			if err := d.Check(); err != nil {
				t.Fatalf("seed %d: clone after the original changed: %v", seed, err)
			}
			changed := entriesOf(z)
			d.RemoveRange(0, d.Len()/2)
			for range 500 {
				if _, err := d.Add([]byte(member()), score(), AddIncr); err != nil && err != ErrNaN && err != ErrMember {
					t.Fatal(err)
				}
			}
			if err := d.Check(); err != nil {
				t.Fatalf("seed %d: clone after changes: %v", seed, err)
			}
			if got := entriesOf(z); fmt.Sprint(got) != fmt.Sprint(changed) {
				t.Fatalf("seed %d: changing the clone changed the original", seed)
			}
			if err := z.Check(); err != nil {
				t.Fatalf("seed %d: original: %v", seed, err)
			}
		})
	}
}
