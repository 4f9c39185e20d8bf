package packed

import (
	"strconv"
	"testing"
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
