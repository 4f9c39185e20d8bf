package packed

import "testing"

func TestBuilderRejectsBadInput(t *testing.T) {
	c := &zcore[int64, float64, float64]{leafCap: 8, branchCap: 4}
	b := c.newBuilder(3)
	if b.add(&probe[int64]{m: 1}, 1) != nil || b.add(&probe[int64]{m: 2}, 1) != nil {
		t.Fatal("valid entries rejected")
	}
	if b.add(&probe[int64]{m: 0}, 1) == nil {
		t.Error("out-of-order entry accepted")
	}
	if b.add(&probe[int64]{m: 1}, 5) == nil {
		t.Error("repeated member accepted")
	}
	if b.finish() == nil {
		t.Error("short load accepted")
	}
}

// A bulk load fills leaves evenly to about 7/8 and builds a valid tree.
func TestBuilderShape(t *testing.T) {
	for _, n := range []int{1, 7, 9, 100, 5000} {
		c := &zcore[int64, float64, float64]{leafCap: 16, branchCap: 4}
		b := c.newBuilder(n)
		for i := range n {
			if err := b.add(&probe[int64]{m: int64(i)}, float64(i/3)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.finish(); err != nil {
			t.Fatal(err)
		}
		if err := c.check(); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		c.walk(nil, func(l *leaf[int64, float64]) {
			if n > 16 && (l.n() < 12 || l.n() > 14) {
				t.Errorf("n=%d: leaf of %d entries", n, l.n())
			}
		})
	}
}
