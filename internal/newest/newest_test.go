package newest

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The log is the newest entries of what was added, against a plain list,
// through changes of the number kept and resets; what it cut is cleared,
// and the slice does not grow past twice what it keeps.
func TestAgainstAList(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var l Log[*int]
	var model []int
	keep := 16
	for step := range 50000 {
		switch r.IntN(200) {
		case 0:
			keep = r.IntN(40)
			l.Keep(keep)
			model = model[max(0, len(model)-keep):]
		case 1:
			l.Reset()
			model = nil
		}
		v := step
		l.Add(&v, keep)
		model = append(model, step)
		model = model[max(0, len(model)-keep):]
		var got []int
		for _, p := range l.Entries() {
			got = append(got, *p)
		}
		if !slices.Equal(got, model) || l.Len() != len(model) {
			t.Fatalf("step %d: %v, want %v", step, got, model)
		}
		for _, p := range l.s[:l.head] {
			if p != nil {
				t.Fatalf("step %d: a cut entry is still held", step)
			}
		}
		if len(l.s) > 2*max(keep, 1) {
			t.Fatalf("step %d: %d slots for %d entries", step, len(l.s), keep)
		}
	}
}
