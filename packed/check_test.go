package packed

import (
	"strconv"
	"testing"
)

// Check must notice each kind of damage.
func TestCheckDetectsCorruption(t *testing.T) {
	build := func() (*ZSet, *zcore[int32, float32, float32]) {
		z := newWithCaps(Int32Float32, 4, 4)
		for i := range 200 {
			z.Add([]byte(strconv.Itoa(i)), float64(i%7), 0)
		}
		return z, z.c.(*zcore[int32, float32, float32])
	}
	type core32 = zcore[int32, float32, float32]
	first := func(c *core32) *leaf[int32, float32] {
		var pa path[int32, float32]
		l, _ := c.selectPath(0, &pa)
		return l
	}
	for name, damage := range map[string]func(c *core32){
		"count":     func(c *core32) { c.root.counts[0]++ },
		"total":     func(c *core32) { c.n-- },
		"order":     func(c *core32) { l := first(c); l.ents[l.lo], l.ents[l.lo+1] = l.ents[l.lo+1], l.ents[l.lo] },
		"zero key":  func(c *core32) { l := first(c); l.ents[l.lo] = 0x7fffffff<<32 | l.ents[l.lo]&(1<<32-1) }, // the key -0 would have without canonical zero
		"fence":     func(c *core32) { c.root.sepS[1] = -1 },
		"fence key": func(c *core32) { c.root.sepK[1]++ },
		"index score": func(c *core32) {
			slot, _ := c.find(hashProbe(&probe[int32]{m: 5}), &probe[int32]{m: 5})
			c.idx.setVal(slot, 99)
		},
		"link": func(c *core32) { first(c).next = nil },
	} {
		z, c := build()
		if err := z.Check(); err != nil {
			t.Fatal(err)
		}
		damage(c)
		if z.Check() == nil {
			t.Errorf("%s: damage not detected", name)
		}
	}
}

// Check must notice a standard leaf's or fence's member prefix that is not
// its member's.
func TestCheckDetectsPrefixDamage(t *testing.T) {
	type coreStd = zcore[sref, float64, struct{}]
	for name, damage := range map[string]func(c *coreStd){
		"leaf prefix": func(c *coreStd) {
			var pa path[sref, float64]
			l, _ := c.selectPath(0, &pa)
			l.pfx[l.lo]++
		},
		"fence prefix": func(c *coreStd) { c.root.sepP[1]++ },
	} {
		z := newWithCaps(Standard, 4, 4)
		for i := range 200 {
			z.Add([]byte("m"+strconv.Itoa(i)), float64(i%7), 0)
		}
		if err := z.Check(); err != nil {
			t.Fatal(err)
		}
		damage(z.c.(*coreStd))
		if z.Check() == nil {
			t.Errorf("%s: damage not detected", name)
		}
	}
}
