package packed

import (
	"math/rand/v2"
	"testing"
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
		z.Add([]byte(itoa(i)), float64(i), 0)
	}
	grown := z.Stats().IndexSlots
	if load := 10000 / float64(grown); load < 7.0/8/growNum*growDen-0.01 || load > 7.0/8 {
		t.Fatalf("load %v after growth", load)
	}
	for i := range 9950 {
		z.Remove([]byte(itoa(i)))
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	if st := z.Stats(); st.IndexSlots >= grown/8 {
		t.Fatalf("index kept %d slots for %d members", st.IndexSlots, st.Len)
	}
}
