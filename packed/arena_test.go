package packed

import (
	"strconv"
	"testing"
)

// Removing most members of a standard set leaves garbage in its arena;
// compaction must reclaim it and keep every reference (members, fences,
// index slots) valid.
func TestArenaCompaction(t *testing.T) {
	z := newWithCaps(Standard, 8, 4)
	for i := range 3000 {
		z.Add([]byte("member-"+strconv.Itoa(i)), float64(i%50), 0)
	}
	full := z.Stats().ArenaBytes
	for i := range 3000 {
		if i%10 != 0 {
			z.Remove([]byte("member-" + strconv.Itoa(i)))
		}
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	st := z.Stats()
	if st.ArenaBytes > full/3 || st.ArenaGarbage > st.ArenaBytes/2 {
		t.Fatalf("arena %d bytes (%d garbage) after removing 90%% of %d", st.ArenaBytes, st.ArenaGarbage, full)
	}
	for i := 0; i < 3000; i += 10 {
		m := "member-" + strconv.Itoa(i)
		if s, ok := z.Score([]byte(m)); !ok || s != float64(i%50) {
			t.Fatalf("%s: %v %v after compaction", m, s, ok)
		}
		mustAdd(t, z, m, 1, AddIncr)
	}
}

func TestArenaRecords(t *testing.T) {
	var a arena
	r1, _ := a.add([]byte("hello"), 1.5)
	r2, _ := a.add(make([]byte, 300), -2)
	if string(a.get(r1)) != "hello" || len(a.get(r2)) != 300 || a.score(r1) != 1.5 || a.score(r2) != -2 {
		t.Fatal("records do not read back")
	}
	a.setScore(r1, 7)
	if a.score(r1) != 7 || string(a.get(r1)) != "hello" || a.size(r2) != scoreSize+2+300 {
		t.Fatal("setScore or size wrong")
	}
	if !a.valid(r2) || a.valid(sref{0xff, 0xff, 0, 0}) {
		t.Fatal("valid wrong")
	}
}
