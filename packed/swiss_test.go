package packed

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// swissOps drives the index directly with caller-chosen hashes, so a test
// can force every member into the same group and fingerprint.
type swissOps struct {
	c *zcore[int64, float64, float64]
}

func (s swissOps) insert(t *testing.T, h uint64, m int64) {
	p := probe[int64]{m: m}
	slot, found := s.c.find(h, &p)
	if found {
		t.Fatalf("%d found before insertion", m)
	}
	if slot < 0 || s.c.idx.growthLeft == 0 && s.c.idx.ctrlAt(slot) != ctrlTomb {
		t.Fatalf("no vacancy for %d", m)
	}
	s.c.idx.commit(slot, h, m, float64(m))
}

func (s swissOps) lookup(h uint64, m int64) (int, bool) {
	p := probe[int64]{m: m}
	return s.c.find(h, &p)
}

func TestSwissCollisions(t *testing.T) {
	c := &zcore[int64, float64, float64]{}
	c.idx.init(4) // 32 slots, 28 usable
	s := swissOps{c}
	last := uint64(1<<64 - 1) // home group is the last: probes wrap around
	live := map[int64]bool{}
	for m := range int64(28) {
		s.insert(t, last, m)
		live[m] = true
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		m := int64(r.IntN(40))
		slot, found := s.lookup(last, m)
		if found != live[m] {
			t.Fatalf("member %d: found %v, live %v", m, found, live[m])
		}
		switch {
		case found:
			if c.idx.val(slot) != float64(m) {
				t.Fatalf("member %d has score %v", m, c.idx.val(slot))
			}
			c.idx.erase(slot)
			delete(live, m)
		case c.idx.growthLeft > 0 || c.idx.ctrlAt(slot) == ctrlTomb:
			s.insert(t, last, m)
			live[m] = true
		}
		if c.idx.count != len(live) || c.idx.count+c.idx.tombs+c.idx.growthLeft != 28 {
			t.Fatalf("counts: %d members (%d live), %d tombs, %d left", c.idx.count, len(live), c.idx.tombs, c.idx.growthLeft)
		}
	}
}

func TestSwissEraseInGroupWithEmptyLeavesNoTombstone(t *testing.T) {
	c := &zcore[int64, float64, float64]{}
	c.idx.init(2)
	s := swissOps{c}
	s.insert(t, 0, 1)
	slot, _ := s.lookup(0, 1)
	c.idx.erase(slot)
	if c.idx.tombs != 0 || c.idx.growthLeft != 14 {
		t.Fatalf("erase from a group with EMPTY slots left %d tombs", c.idx.tombs)
	}
	for m := range int64(8) {
		s.insert(t, 0, m)
	}
	slot, _ = s.lookup(0, 3)
	c.idx.erase(slot)
	if c.idx.tombs != 1 {
		t.Fatalf("erase from a full group must leave a tombstone")
	}
	if _, found := s.lookup(0, 7); !found {
		t.Fatal("member past the tombstone lost")
	}
}

func TestIndexGrowsAndShrinks(t *testing.T) {
	z := New(Int64Float64)
	for i := range 10000 {
		z.Add([]byte(strconv.Itoa(i)), float64(i), 0)
	}
	grown := z.Stats().IndexSlots
	if load := 10000 / float64(grown); load < 7.0/8/growNum*growDen-0.01 || load > 7.0/8 {
		t.Fatalf("load %v after growth", load)
	}
	for i := range 9950 {
		z.Remove([]byte(strconv.Itoa(i)))
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	if st := z.Stats(); st.IndexSlots >= grown/8 {
		t.Fatalf("index kept %d slots for %d members", st.IndexSlots, st.Len)
	}
}

// TestIndexResizeIsIncremental grows sets well past the size that resizes
// at once, with removals, rescores and (standard) arena compactions mixed
// in, then shrinks them. It checks that resizes run in steps (some
// commands see one in progress), that each finishes before the next one
// starts, that a step moves no more than its share, and that every member
// keeps its score throughout, with the invariant checker run while resizes
// are in progress.
func TestIndexResizeIsIncremental(t *testing.T) {
	seed := testutil.Seed(t)
	for _, l := range []Layout{Int32Float32, Standard, UUIDFloat64} {
		t.Run(l.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(l)))
			n := 60000
			switch {
			case invariants: // (every command checks the whole set)
				n = 2500
			case testing.Short() || raceEnabled:
				n = 15000
			}
			z := New(l)
			model := map[string]float64{}
			name := func(i int) []byte {
				if l == UUIDFloat64 {
					return fmt.Appendf(nil, "00000000-0000-4000-8000-%012x", i)
				}
				return []byte(strconv.Itoa(i))
			}
			var prev Stats
			moving, resizes, checks := 0, 0, 0
			observe := func(op int) {
				st := z.Stats()
				if st.IndexSlots != prev.IndexSlots && prev.IndexSlots > migrateAll*groupSize {
					resizes++
					if prev.IndexMoving != 0 {
						t.Fatalf("op %d: a resize to %d slots began while the one from %d slots was still moving", op, st.IndexSlots, prev.IndexMoving)
					}
				}
				if st.IndexMoving != 0 {
					moving++
					next, total := z.c.(interface{ movingProgress() (int, int) }).movingProgress()
					if next <= 0 || next >= total {
						t.Fatalf("op %d: resize at group %d of %d", op, next, total)
					}
					if moving%500 == 1 {
						checks++
						if err := z.Check(); err != nil {
							t.Fatalf("op %d, resize in progress: %v", op, err)
						}
					}
				}
				prev = st
			}
			verify := func(op int) {
				for range 20 {
					i := r.IntN(n)
					s, ok := z.Score(name(i))
					want, live := model[string(name(i))]
					if ok != live || ok && s != want {
						t.Fatalf("op %d: member %d: score %v %v, want %v %v", op, i, s, ok, want, live)
					}
				}
			}
			for op := range 3 * n {
				i := r.IntN(n)
				m := name(i)
				switch k := r.IntN(10); {
				case k < 6 || op < n/2:
					s := float64(r.IntN(1000))
					if _, err := z.Add(m, s, 0); err != nil {
						t.Fatal(err)
					}
					model[string(m)] = s
				case k < 8:
					res, err := z.Add(m, 1, AddIncr)
					if err != nil {
						t.Fatal(err)
					}
					model[string(m)] = res.Score
				default:
					z.Remove(m)
					delete(model, string(m))
				}
				observe(op)
				if op%997 == 0 {
					verify(op)
				}
			}
			for i := range n { // shrink: the index resizes down in steps too
				m := name(i)
				if i%50 != 0 {
					z.Remove(m)
					delete(model, string(m))
				}
				observe(3*n + i)
			}
			verify(4 * n)
			if err := z.Check(); err != nil {
				t.Fatal(err)
			}
			if z.Len() != len(model) {
				t.Fatalf("%d members, model %d", z.Len(), len(model))
			}
			if resizes < 3 || moving == 0 || checks == 0 {
				t.Fatalf("%d resizes of large tables, %d commands saw one in progress, %d checks", resizes, moving, checks)
			}
			t.Logf("seed %d: %d resizes of large tables, %d commands saw one in progress, %d checks during them", seed, resizes, moving, checks)
		})
	}
}

// movingProgress returns how far a resize in progress is: the groups moved
// and the old table's groups (TestIndexResizeIsIncremental).
func (c *zcore[M, S, V]) movingProgress() (int, int) {
	if c.idx.mv == nil {
		return 0, 0
	}
	return c.idx.mv.next, len(c.idx.mv.old)
}
