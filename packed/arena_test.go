package packed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// Removing most members of a standard set leaves garbage in its arena;
// reclaiming it must keep every reference (members, fences, index slots)
// valid. Both ways: compacting the whole arena, and evacuating one chunk
// per removal (records longer than a chunk included).
func TestArenaCompaction(t *testing.T) {
	t.Run("compact", func(t *testing.T) { testArenaReclaim(t, false) })
	t.Run("evacuate", func(t *testing.T) { testArenaReclaim(t, true) })
}

func testArenaReclaim(t *testing.T, evacuate bool) {
	const n = 3000
	// Members of 70-odd bytes: the records spread over several 64 KiB
	// chunks.
	name := func(i int) string {
		if i == 10 || i%1000 == 5 { // records longer than a chunk, one kept
			return strings.Repeat("L", chunkSize+100) + strconv.Itoa(i)
		}
		return strings.Repeat("m", 64) + "-" + strconv.Itoa(i)
	}
	z := newWithCaps(Standard, 8, 4)
	compactions, evacuations := useEvacuation(t)
	if !evacuate {
		compactLimit = 1 << 30
	}
	for i := range n {
		z.Add([]byte(name(i)), float64(i%50), 0)
	}
	full := z.Stats().ArenaBytes
	live := 0 // bytes of the records that stay
	for i := range n {
		if i%10 != 0 {
			z.Remove([]byte(name(i)))
		} else {
			live += scoreSize + uvarintLen(uint64(len(name(i)))) + len(name(i))
		}
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	// Compaction keeps garbage under the live bytes, and chunks' slack
	// under a chunk and a record's worth per chunk.
	st := z.Stats()
	if st.ArenaGarbage > live || st.ArenaBytes > 2*live+2*chunkSize || st.ArenaBytes >= full {
		t.Fatalf("arena %d bytes (%d garbage, %d live) after removing 90%% of %d", st.ArenaBytes, st.ArenaGarbage, live, full)
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 10 {
		m := name(i)
		if s, ok := z.Score([]byte(m)); !ok || s != float64(i%50) {
			t.Fatalf("%s: %v %v after compaction", m, s, ok)
		}
		mustAdd(t, z, m, 1, AddIncr)
	}
	if evacuate && (*compactions > 0 || *evacuations == 0) || !evacuate && (*compactions == 0 || *evacuations > 0) {
		t.Fatalf("%d compactions and %d evacuations", *compactions, *evacuations)
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

// Records fill 64 KiB chunks without crossing their ends; a record longer
// than a chunk gets a buffer of its own and the chunk numbers it spans; the
// slack stays within the last chunk.
func TestArenaChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 5))
	var a arena
	type rec struct {
		ref sref
		b   []byte
		s   float64
	}
	var recs []rec
	total := 0
	for i := range 20000 {
		n := r.IntN(40)
		switch i % 5000 {
		case 1:
			n = chunkSize - scoreSize - 3 // exactly one chunk
		case 2:
			n = 3*chunkSize + 17 // spans four chunk numbers
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		ref, ok := a.add(b, float64(i))
		if !ok {
			t.Fatal("add failed")
		}
		recs = append(recs, rec{ref, b, float64(i)})
		total += scoreSize + uvarintLen(uint64(n)) + n
	}
	seen := map[uint32]bool{}
	for _, x := range recs {
		off := binary.LittleEndian.Uint32(x.ref[:])
		if seen[off] {
			t.Fatalf("two records at offset %#x", off)
		}
		seen[off] = true
		if !a.valid(x.ref) || !bytes.Equal(a.get(x.ref), x.b) || a.score(x.ref) != x.s || a.size(x.ref) != scoreSize+uvarintLen(uint64(len(x.b)))+len(x.b) {
			t.Fatalf("record at %#x (%d bytes) does not read back", off, len(x.b))
		}
		if int(off&(chunkSize-1))+a.size(x.ref) > max(chunkSize, a.size(x.ref)) {
			t.Fatalf("record at %#x (%d bytes) crosses its chunk's end", off, a.size(x.ref))
		}
	}
	if a.used != total {
		t.Fatalf("used %d, want %d", a.used, total)
	}
	// Slack: the last chunk's unused tail, and up to a record's worth at
	// the end of every other chunk.
	if slack := a.capacity() - total; slack > chunkSize+len(a.chunks)*64+allocSize(uintptr(cap(a.chunks))*24, true) {
		t.Fatalf("%d bytes of records in %d allocated", total, a.capacity())
	}
	if a.valid(sref{0xff, 0xff, 0xff, 0xff}) {
		t.Fatal("an offset past the last chunk is valid")
	}
}

// Random additions, removals and rescores of long standard members, in a
// deep tree of small leaves, so that compactions come often: after each,
// the set must pass Check and agree with a plain map.
func TestCompactionRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 6))
	z := newWithCaps(Standard, 8, 4)
	c := z.c.(*zcore[sref, float64, struct{}])
	model := map[string]float64{}
	agree := func() {
		t.Helper()
		if err := z.Check(); err != nil {
			t.Fatal(err)
		}
		if z.Len() != len(model) {
			t.Fatalf("%d members, model %d", z.Len(), len(model))
		}
		for m, s := range model {
			if got, ok := z.Score([]byte(m)); !ok || got != s {
				t.Fatalf("%q: %v %v, model %v", m, got, ok, s)
			}
		}
	}
	compactions := 0
	for range 20000 {
		k := r.IntN(600)
		m := strings.Repeat("user:", 1+k%8) + strconv.Itoa(k) // 6 to 44 bytes
		used := c.ar.used
		if r.IntN(3) == 0 {
			z.Remove([]byte(m))
			delete(model, m)
		} else {
			s := float64(r.IntN(20))
			mustAdd(t, z, m, s, 0)
			model[m] = s
		}
		if c.ar.used < used { // a compaction dropped the garbage
			compactions++
			agree()
		}
	}
	agree()
	t.Logf("%d compactions; used %d garbage %d n %d", compactions, c.ar.used, c.ar.garbage, c.n)
	if compactions < 3 {
		t.Fatalf("only %d compactions", compactions)
	}
}

// useEvacuation makes every reclaim of the test evacuate chunks, however
// small the set (compactLimit 0), and counts compactions and evacuations.
func useEvacuation(t *testing.T) (compactions, evacuations *int) {
	t.Helper()
	compactions, evacuations = new(int), new(int)
	limit := compactLimit
	compactLimit = 0
	reclaimHook = func(full bool) {
		if full {
			*compactions++
		} else {
			*evacuations++
		}
	}
	t.Cleanup(func() { compactLimit, reclaimHook = limit, nil })
	return compactions, evacuations
}

// Random insertions, removals, rescores, increments and range removals of
// standard members of 1 to 400 bytes (and a few longer than a chunk), in a
// deep tree of small leaves, with every reclaim evacuating one chunk: the
// set must pass Check (which verifies the arena's chunks, garbage counts
// and free chunk numbers, and that every reference is to a record) and
// agree with a plain map throughout; chunk numbers must be reused, not
// grow with the churn; and garbage must stay near half of the arena.
func TestEvacuationRandom(t *testing.T) {
	seed := testutil.Seed(t)
	r := rand.New(rand.NewPCG(seed, 7))
	z := newWithCaps(Standard, 8, 4)
	c := z.c.(*zcore[sref, float64, struct{}])
	_, evacuations := useEvacuation(t)
	model := map[string]float64{}
	name := func(k int) string {
		if k%997 == 3 {
			return strings.Repeat("L", chunkSize+k) // longer than a chunk
		}
		return strconv.Itoa(k) + ":" + strings.Repeat("x", k*7919%400)
	}
	agree := func(when string) {
		t.Helper()
		if err := z.Check(); err != nil {
			t.Fatalf("seed %d, %s: %v", seed, when, err)
		}
		if z.Len() != len(model) {
			t.Fatalf("seed %d, %s: %d members, model %d", seed, when, z.Len(), len(model))
		}
		for m, s := range model {
			if got, ok := z.Score([]byte(m)); !ok || got != s {
				t.Fatalf("seed %d, %s: %.20q: %v %v, model %v", seed, when, m, got, ok, s)
			}
		}
	}
	ops := 200000
	switch {
	case invariants: // Check after every operation
		ops = 20000
	case testing.Short() || raceEnabled:
		ops = 50000
	}
	maxChunks, last := 0, 0
	for op := range ops {
		k := r.IntN(3000)
		m := name(k)
		switch x := r.IntN(100); {
		case x < 40:
			z.Remove([]byte(m))
			delete(model, m)
		case x < 45 && z.Len() > 0:
			// A rescore by increment: the record stays, the entry moves.
			if _, ok := model[m]; ok {
				res, err := z.Add([]byte(m), 1, AddIncr)
				if err != nil {
					t.Fatal(err)
				}
				model[m] = res.Score
			}
		case x < 46 && z.Len() > 10:
			start := r.IntN(z.Len() - 5)
			var gone []string
			z.Range(start, start+5, false, func(b []byte, _ float64) bool {
				gone = append(gone, string(b))
				return true
			})
			z.RemoveRange(start, start+5)
			for _, g := range gone {
				delete(model, g)
			}
		default:
			s := float64(r.IntN(50))
			if _, err := z.Add([]byte(m), s, 0); err != nil {
				t.Fatal(err)
			}
			model[m] = s
		}
		maxChunks = max(maxChunks, len(c.ar.chunks))
		if *evacuations != last || op%5000 == 0 {
			last = *evacuations
			agree(fmt.Sprintf("op %d, %d evacuations", op, *evacuations))
		}
	}
	agree("the end")
	t.Logf("seed %d: %d evacuations; %d chunk numbers at most; used %d garbage %d, %d members", seed, *evacuations, maxChunks, c.ar.used, c.ar.garbage, c.n)
	if *evacuations < ops/5000 {
		t.Fatalf("only %d evacuations", *evacuations)
	}
	// About 1,600 members of about 210 bytes and up to four long ones take
	// about 0.6 MiB, ten chunks' worth, so with garbage at most half the
	// arena the arena needs about 20 chunk numbers (24 at most over the
	// seeds tried); without reuse, 200,000 operations write far more.
	if maxChunks > 40 {
		t.Fatalf("%d chunk numbers in use at most: freed numbers are not reused", maxChunks)
	}
	// Garbage is at most half of the arena, but for the tail's, which is
	// not evacuated.
	if tail := c.ar.chunks[c.ar.tail]; c.ar.garbage-int(tail.dead) > c.ar.used/2 {
		t.Fatalf("garbage %d of %d bytes at the end (%d in the tail)", c.ar.garbage, c.ar.used, tail.dead)
	}
}

// A range removal evacuates a chunk per 4,096 members it removed (while
// the arena stays over half garbage), so that a large one does not leave
// its garbage to the removals that follow.
func TestRangeRemovalEvacuates(t *testing.T) {
	if invariants {
		t.Skip("12,000 insertions, each followed by the full Check, take half a minute; the plain build runs this test")
	}
	z := New(Standard)
	_, evacuations := useEvacuation(t)
	for i := range 12000 {
		z.Add([]byte(fmt.Sprintf("%06d:%s", i, strings.Repeat("v", 90))), float64(i), 0)
	}
	if got := z.RemoveRange(0, 9000); got != 9000 {
		t.Fatalf("RemoveRange removed %d", got)
	}
	if *evacuations != 3 {
		t.Fatalf("%d evacuations after removing 9,000 members, want 3", *evacuations)
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	if s, ok := z.Score([]byte(fmt.Sprintf("%06d:%s", 9000, strings.Repeat("v", 90)))); !ok || s != 9000 || z.Len() != 3000 {
		t.Fatalf("after the removal: %v %v, %d members", s, ok, z.Len())
	}
}
