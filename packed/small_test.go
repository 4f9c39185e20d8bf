package packed

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// isSmall reports whether z is in its small form.
func isSmall(z *ZSet) bool { _, ok := z.c.(*small); return ok }

// TestModelSmall drives standard sets that start small against the model:
// sets that stay under the small form's limits, sets that outgrow it by
// count (pool 150 grows past 128 members, then shrinks), and sets that
// outgrow it by a member longer than 64 bytes.
func TestModelSmall(t *testing.T) {
	seed := testutil.Seed(t)
	for _, c := range []struct{ pool, long int }{{60, 0}, {120, 0}, {150, 0}, {60, 200}, {150, 40}} {
		t.Run(fmt.Sprintf("pool=%d/long=%d", c.pool, c.long), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(c.pool)<<16|uint64(c.long)))
			ops := 4000
			if testing.Short() || raceEnabled {
				ops = 1500
			}
			runModelOn(t, r, New(Standard), ops, c.pool, c.long)
		})
	}
}

// TestSmallMatchesTree applies the same random operations to a small set
// and to a tree of one leaf and compares every answer, LexRank over mixed
// scores included (both search by halving, so where members are not in
// order they still agree), and the encodings byte for byte.
func TestSmallMatchesTree(t *testing.T) {
	seed := testutil.Seed(t)
	r := rand.New(rand.NewPCG(seed, 7))
	for round := range 200 {
		s, tr := New(Standard), NewWithCapacity(Standard, DefaultLeafCap)
		members := []string{"", "a", "b", "ab", "ba", "\x00", "\xff", "abc", "zz", "q"}
		for i := range 150 {
			members = append(members, fmt.Sprintf("m%d", i))
		}
		for op := range 400 {
			m := []byte(members[r.IntN(len(members))])
			sc := float64(r.IntN(5))
			if r.IntN(10) == 0 {
				sc = math.Copysign(0, -1)
			}
			switch x := r.IntN(100); {
			case x < 50:
				f := []AddFlags{0, AddNX, AddXX, AddGT, AddLT, AddIncr, AddIncr | AddXX}[r.IntN(7)]
				a, ea := s.Add(m, sc, f)
				b, eb := tr.Add(m, sc, f)
				if a != b && !(a.Skipped && b.Skipped) || ea != eb {
					t.Fatalf("round %d op %d Add(%q, %v, %b): small %+v %v, tree %+v %v", round, op, m, sc, f, a, ea, b, eb)
				}
			case x < 65:
				if a, b := s.Remove(m), tr.Remove(m); a != b {
					t.Fatalf("round %d op %d Remove(%q): small %v, tree %v", round, op, m, a, b)
				}
			case x < 68:
				i, j := r.IntN(s.Len()+2)-1, r.IntN(s.Len()+2)-1
				if a, b := s.RemoveRange(i, j), tr.RemoveRange(i, j); a != b {
					t.Fatalf("round %d op %d RemoveRange(%d, %d): small %d, tree %d", round, op, i, j, a, b)
				}
			default:
				incl := r.IntN(2) == 0
				a, _ := s.LexRank(m, incl)
				b, _ := tr.LexRank(m, incl)
				if a != b {
					t.Fatalf("round %d op %d LexRank(%q, %v): small %d, tree %d", round, op, m, incl, a, b)
				}
				if a, b := s.ScoreRank(sc, incl), tr.ScoreRank(sc, incl); a != b {
					t.Fatalf("round %d op %d ScoreRank(%v, %v): small %d, tree %d", round, op, sc, incl, a, b)
				}
				ra, sa, oka := s.Rank(m)
				rb, sb, okb := tr.Rank(m)
				if ra != rb || !sameFloat(sa, sb) || oka != okb {
					t.Fatalf("round %d op %d Rank(%q): small %d %v %v, tree %d %v %v", round, op, m, ra, sa, oka, rb, sb, okb)
				}
			}
		}
		if err := s.Check(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got, want := dump(s, true), dump(tr, true); got != want {
			t.Fatalf("round %d: reversed ranges differ:\n%s\n%s", round, got, want)
		}
		var a, b bytes.Buffer
		if err := s.EncodeTo(&a); err != nil {
			t.Fatal(err)
		}
		if err := tr.EncodeTo(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("round %d: encodings differ (small: %d members, %v)", round, s.Len(), isSmall(s))
		}
	}
}

func dump(z *ZSet, reverse bool) string {
	var sb strings.Builder
	z.Range(0, z.Len(), reverse, func(m []byte, s float64) bool {
		fmt.Fprintf(&sb, "%q=%v ", m, s)
		return true
	})
	return sb.String()
}

// TestSmallGrows: the 129th member, or a member of 65 bytes, moves the set
// to the tree with every entry; 128 members and 64-byte members do not.
func TestSmallGrows(t *testing.T) {
	z := New(Standard)
	for i := range smallMaxEntries {
		if _, err := z.Add([]byte(fmt.Sprintf("m%03d", i)), float64(i%7), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := z.Add(bytes.Repeat([]byte("x"), smallMaxMember), 1, AddXX); err != nil || !isSmall(z) {
		t.Fatalf("an XX add of a missing member moved the set: %v", err)
	}
	if !isSmall(z) || z.Len() != smallMaxEntries {
		t.Fatalf("128 members: small %v, %d members", isSmall(z), z.Len())
	}
	before := dump(z, false)
	if _, err := z.Add([]byte("m128"), 3, 0); err != nil {
		t.Fatal(err)
	}
	if isSmall(z) || z.Len() != smallMaxEntries+1 || z.Check() != nil {
		t.Fatalf("129 members: small %v, %d members, %v", isSmall(z), z.Len(), z.Check())
	}
	z.Remove([]byte("m128"))
	if dump(z, false) != before {
		t.Fatal("the tree does not hold what the small set held")
	}

	z = New(Standard)
	z.Add([]byte("a"), 1, 0)
	z.Add(bytes.Repeat([]byte("y"), smallMaxMember), 2, 0)
	if !isSmall(z) {
		t.Fatal("a 64-byte member moved the set")
	}
	z.Add(bytes.Repeat([]byte("y"), smallMaxMember+1), 3, 0)
	if isSmall(z) || z.Len() != 3 || z.Check() != nil {
		t.Fatalf("a 65-byte member: small %v, %d members", isSmall(z), z.Len())
	}
}

// TestSmallSnapshotIsCopiedOnWrite: a view keeps what the set held when it
// was taken while the set changes in every way.
func TestSmallSnapshotIsCopiedOnWrite(t *testing.T) {
	for _, change := range []func(z *ZSet){
		func(z *ZSet) { z.Add([]byte("new"), 0.5, 0) },
		func(z *ZSet) { z.Add([]byte("b"), 10, 0) },
		func(z *ZSet) { z.Remove([]byte("a")) },
		func(z *ZSet) { z.RemoveRange(0, 2) },
		func(z *ZSet) {
			for i := range 200 {
				z.Add([]byte(fmt.Sprint(i)), 1, 0)
			}
		},
	} {
		z := New(Standard)
		for i, m := range []string{"a", "b", "c"} {
			z.Add([]byte(m), float64(i), 0)
		}
		v := z.Snapshot()
		var want bytes.Buffer
		if err := z.EncodeTo(&want); err != nil {
			t.Fatal(err)
		}
		change(z)
		var got bytes.Buffer
		if err := v.EncodeTo(&got); err != nil {
			t.Fatal(err)
		}
		var each []string
		v.Each(func(m []byte, s float64) bool { each = append(each, fmt.Sprintf("%s=%v", m, s)); return true })
		if !bytes.Equal(got.Bytes(), want.Bytes()) || !slices.Equal(each, []string{"a=0", "b=1", "c=2"}) || v.Len() != 3 {
			t.Fatalf("the view changed with the set: %v", each)
		}
	}
}

// TestDecodeChoosesForm: a decoded standard set of up to 128 short members
// is small; one with a long member, or more members, is a tree; both hold
// what was encoded, and a member twice or out of order is refused.
func TestDecodeChoosesForm(t *testing.T) {
	for _, c := range []struct {
		n, long int
		small   bool
	}{{0, 0, true}, {1, 0, true}, {128, 0, true}, {129, 0, false}, {5, 65, false}, {5, 64, true}} {
		src := NewWithCapacity(Standard, 8)
		for i := range c.n {
			src.Add([]byte(fmt.Sprintf("m%d", i)), float64(i%3), 0)
		}
		if c.long > 0 {
			src.Add(bytes.Repeat([]byte("l"), c.long), 1, 0)
		}
		var buf bytes.Buffer
		if err := src.EncodeTo(&buf); err != nil {
			t.Fatal(err)
		}
		d, err := Decode(bufio.NewReader(&buf))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if isSmall(d) != c.small || dump(d, false) != dump(src, false) || d.Check() != nil {
			t.Fatalf("%+v: small %v, same %v, %v", c, isSmall(d), dump(d, false) == dump(src, false), d.Check())
		}
	}
	// One block of scores, then members: entry counts, scores and members
	// that break the encoding's rules.
	block := func(scores []float64, members ...string) []byte {
		b := []byte{encodingVersion, byte(Standard), byte(len(members)), byte(len(scores))}
		for _, s := range scores {
			b = appendScore(b, s)
		}
		for _, m := range members {
			b = append(append(b, byte(len(m))), m...)
		}
		return b
	}
	for name, enc := range map[string][]byte{
		"twice":        block([]float64{1, 2}, "a", "a"),
		"out of order": block([]float64{0, 0}, "b", "a"),
		"lower score":  block([]float64{2, 1}, "a", "b"),
		"NaN":          block([]float64{math.NaN()}, "a"),
		"cut short":    block([]float64{1, 2}, "a", "b")[:20],
	} {
		if _, err := Decode(bufio.NewReader(bytes.NewReader(enc))); err != ErrCorrupt {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if z, err := Decode(bufio.NewReader(bytes.NewReader(block([]float64{1, 1}, "a", "b")))); err != nil || dump(z, false) != `"a"=1 "b"=1 ` {
		t.Fatalf("a valid block: %v", err)
	}
}

// TestSmallFormIsSmall: the small form's memory against the tree's for
// the same members.
func TestSmallFormIsSmall(t *testing.T) {
	for _, n := range []int{1, 10, 50, 128} {
		s, tr := New(Standard), NewWithCapacity(Standard, DefaultLeafCap)
		for i := range n {
			m := []byte(fmt.Sprintf("user:%d", i))
			s.Add(m, float64(i), 0)
			tr.Add(m, float64(i), 0)
		}
		t.Logf("%d members: small %d bytes, tree %d bytes", n, s.Bytes(), tr.Bytes())
		if !isSmall(s) || s.Bytes()*2 > tr.Bytes() {
			t.Errorf("%d members: small %d bytes, tree %d", n, s.Bytes(), tr.Bytes())
		}
	}
	one := New(Standard)
	one.Add([]byte("a"), 1, 0)
	if b := one.Bytes(); b > 80 {
		t.Errorf("a one-member set takes %d bytes", b)
	}
}

// BenchmarkSmallSets: 10,000 sets of k members ("user:<n>", scores in
// [0, 1000)), each operation on a random set: a rescore (ZADD), a lookup
// (ZSCORE) or a rank (ZRANK), in the small form and in the tree.
func BenchmarkSmallSets(b *testing.B) {
	for _, k := range []int{10, 50, 120} {
		for _, form := range []string{"small", "tree"} {
			sets := make([]*ZSet, 10000)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range sets {
				if form == "small" {
					sets[i] = New(Standard)
				} else {
					sets[i] = NewWithCapacity(Standard, DefaultLeafCap)
				}
				for j := range k {
					sets[i].Add([]byte(fmt.Sprintf("user:%d", j)), float64(r.IntN(1000)), 0)
				}
			}
			members := make([][]byte, k)
			for j := range members {
				members[j] = []byte(fmt.Sprintf("user:%d", j))
			}
			for _, op := range []string{"zadd", "zscore", "zrank"} {
				b.Run(fmt.Sprintf("k=%d/%s/%s", k, op, form), func(b *testing.B) {
					for b.Loop() {
						z, m := sets[r.IntN(len(sets))], members[r.IntN(k)]
						switch op {
						case "zadd":
							z.Add(m, float64(r.IntN(1000)), 0)
						case "zscore":
							z.Score(m)
						default:
							z.Rank(m)
						}
					}
				})
			}
		}
	}
}

// BenchmarkDecodeSmallSets decodes sets of 10 members, as a restore from a
// snapshot of many small keys does: ns and allocations a set.
func BenchmarkDecodeSmallSets(b *testing.B) {
	z := New(Standard)
	for j := range 10 {
		z.Add([]byte(fmt.Sprintf("%d-user:%d", 1700000000000+j*100, j)), float64(1700000000000+j*100), 0)
	}
	var enc bytes.Buffer
	if err := z.EncodeTo(&enc); err != nil {
		b.Fatal(err)
	}
	rd := bytes.NewReader(nil)
	br := bufio.NewReader(rd)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(enc.Bytes())
		br.Reset(rd)
		if _, err := Decode(br); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLexRankIndependentOfShape: LexRank answers from the entries alone,
// whatever the structure holding them. Over mixed scores the members are
// not in order, and a search that follows the tree's shape found other
// boundaries in a tree built write by write than in one bulk-loaded from a
// snapshot: ZREMRANGEBYLEX, applied by every node, would then remove other
// members on a node restored from a snapshot than on the others.
func TestLexRankIndependentOfShape(t *testing.T) {
	seed := testutil.Seed(t)
	r := rand.New(rand.NewPCG(seed, 11))
	for _, l := range []Layout{Standard, Int32Float32, Int64Float64} {
		for round := range 60 {
			n := 1 + r.IntN(400)
			mixed := round%3 != 0 // every third set has one score: members in order
			member := func(i int) []byte {
				if l == Standard {
					return []byte(fmt.Sprintf("m%04d", i))
				}
				return []byte(fmt.Sprint(i))
			}
			var sets []*ZSet
			for _, caps := range [][2]int{{4, 4}, {8, 5}, {DefaultLeafCap, maxFanout}} {
				z := newWithCaps(l, caps[0], caps[1])
				rr := rand.New(rand.NewPCG(seed, uint64(round)))
				for _, i := range rr.Perm(n) {
					sc := 0.0
					if mixed {
						sc = float64(i * 7919 % 13)
					}
					if _, err := z.Add(member(i), sc, 0); err != nil {
						t.Fatal(err)
					}
				}
				sets = append(sets, z)
			}
			var enc bytes.Buffer
			if err := sets[0].EncodeTo(&enc); err != nil {
				t.Fatal(err)
			}
			d, err := Decode(bufio.NewReader(&enc))
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, d)
			for range 50 {
				p, incl := member(r.IntN(n+10)-5), r.IntN(2) == 0
				want, _ := sets[0].LexRank(p, incl)
				for i, z := range sets[1:] {
					if got, _ := z.LexRank(p, incl); got != want {
						t.Fatalf("%v round %d (%d members, mixed %v): LexRank(%s, %v) = %d in set %d, %d in the first", l, round, n, mixed, p, incl, got, i+1, want)
					}
				}
			}
		}
	}
}

// TestSmallClone: a small set's clone is small, as large, and apart from
// it; a set that outgrew its small form still counts the allocation it was
// made in.
func TestSmallClone(t *testing.T) {
	z := New(Standard)
	for i := range 20 {
		z.Add([]byte(fmt.Sprint("m", i)), float64(i), 0)
	}
	c := z.Clone()
	if !isSmall(c) || c.Bytes() != z.Bytes() || dump(c, false) != dump(z, false) {
		t.Fatalf("clone: small %v, %d bytes against %d", isSmall(c), c.Bytes(), z.Bytes())
	}
	c.Add([]byte("m0"), 100, 0)
	if s, _ := z.Score([]byte("m0")); s != 0 {
		t.Fatal("a write to the clone changed the original")
	}
	for i := range 200 {
		z.Add([]byte(fmt.Sprint("n", i)), float64(i), 0)
	}
	if isSmall(z) || z.Bytes()-z.c.bytes() != allocSize(sizeOf[smallSet](), true) {
		t.Fatalf("grown: small %v, %d bytes with %d for the set's own allocation", isSmall(z), z.Bytes(), z.Bytes()-z.c.bytes())
	}
}

// TestSmallLoadRefusesLongMembersFirst: a set of few entries with a long
// member (a decoded one) goes to the tree before the small form allocates
// room for that member.
func TestSmallLoadRefusesLongMembersFirst(t *testing.T) {
	long := make([]byte, 1<<20)
	entries := func(yield func([]byte, float64) bool) { yield([]byte("a"), 1); yield(long, 2) }
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := new(small).load(2, entries)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; err != errGrowSmall || grew > 64<<10 {
		t.Fatalf("load of a 1 MiB member: %v, %d bytes allocated", err, grew)
	}
}
