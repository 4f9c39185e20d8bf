package packed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// model is the reference: a map from member text to score plus the
// entries kept sorted in a plain slice, with the layout rules written out
// plainly.
type model struct {
	layout Layout
	m      map[string]float64
	es     []entry // sorted by (score, member order key)
}

type entry struct {
	m string
	s float64
	k string // the member's order key (see orderKey)
}

func newModel(l Layout) *model { return &model{layout: l, m: map[string]float64{}} }

// orderKey returns a string whose byte order is the layout's member order:
// sign-flipped big-endian integers, UUID bytes, standard members as is.
func (md *model) orderKey(m string) string {
	switch md.layout.Member() {
	case MemberInt32, MemberInt64:
		v, _ := parseCanonicalInt([]byte(m))
		return string(binary.BigEndian.AppendUint64(nil, uint64(v)^1<<63))
	case MemberUUID:
		u, _ := parseUUID([]byte(m))
		return string(u[:])
	}
	return m
}

func cmpEntry(a, b entry) int {
	if a.s != b.s {
		if a.s < b.s {
			return -1
		}
		return 1
	}
	return strings.Compare(a.k, b.k)
}

func (md *model) sorted() []entry { return md.es }

func (md *model) set(m string, s float64) {
	md.del(m)
	md.m[m] = s
	e := entry{m, s, md.orderKey(m)}
	i, _ := slices.BinarySearchFunc(md.es, e, cmpEntry)
	md.es = slices.Insert(md.es, i, e)
}

func (md *model) del(m string) {
	s, ok := md.m[m]
	if !ok {
		return
	}
	delete(md.m, m)
	i, found := slices.BinarySearchFunc(md.es, entry{m, s, md.orderKey(m)}, cmpEntry)
	if !found {
		panic("model out of order")
	}
	md.es = slices.Delete(md.es, i, i+1)
}

func fits32(f float64) bool { return float64(float32(f)) == f }

// holds reports whether the model's layout stores score f without
// widening: FLOAT32 layouts hold what float32 does, except that
// INT32/FLOAT32 (order-key leaves) does not hold -0.
func (md *model) holds(f float64) bool {
	if md.layout == Int32Float32 && f == 0 && math.Signbit(f) {
		return false
	}
	return !md.layout.Float32Scores() || fits32(f)
}

func (md *model) add(mem string, sc float64, f AddFlags) (AddResult, error) {
	widenM := false
	switch md.layout.Member() {
	case MemberInt32, MemberInt64:
		v, ok := parseCanonicalInt([]byte(mem))
		if !ok {
			return AddResult{}, ErrMember
		}
		widenM = md.layout.Member() == MemberInt32 && (v < math.MinInt32 || v > math.MaxInt32)
	case MemberUUID:
		if _, ok := parseUUID([]byte(mem)); !ok {
			return AddResult{}, ErrMember
		}
	}
	if math.IsNaN(sc) {
		return AddResult{}, ErrNaN
	}
	cur, exists := md.m[mem]
	if exists {
		if f&AddNX != 0 {
			return AddResult{Score: cur, Skipped: true}, nil
		}
		ns := sc
		if f&AddIncr != 0 {
			ns += cur
			if math.IsNaN(ns) {
				return AddResult{}, ErrNaN
			}
		}
		if f&AddGT != 0 && !(ns > cur) || f&AddLT != 0 && !(ns < cur) {
			return AddResult{Score: cur, Skipped: true}, nil
		}
		if ns == cur {
			return AddResult{Score: cur}, nil
		}
		if !md.holds(ns) {
			md.layout = md.layout.widenScore()
		}
		md.set(mem, ns)
		return AddResult{Score: ns, Changed: true}, nil
	}
	if f&AddXX != 0 {
		return AddResult{Skipped: true}, nil
	}
	if widenM {
		md.layout = md.layout.widenMember()
	}
	if !md.holds(sc) {
		md.layout = md.layout.widenScore()
	}
	md.set(mem, sc)
	return AddResult{Score: sc, Added: true}, nil
}

// gen makes members and scores for a layout: a small pool so that members
// repeat, extremes, widening values and invalid texts.
type gen struct {
	r      *rand.Rand
	layout Layout
	uuids  []string
	pool   int // integer members are drawn from [-pool/3, 2*pool/3)
	// long: one standard member in long is 60 to 70 bytes (0: none).
	long int
}

func newGen(r *rand.Rand, l Layout, pool int) *gen {
	g := &gen{r: r, layout: l, pool: pool}
	for i := range pool / 3 {
		var u [16]byte
		u[0] = byte(i % 3)
		u[15] = byte(r.IntN(256))
		u[14] = byte(i)
		if i%5 == 0 {
			u[7] = 0xff
		}
		g.uuids = append(g.uuids, string(appendUUID(nil, u)))
	}
	return g
}

var badInts = []string{"007", "+1", "-0", " 1", "1.0", "abc", "", "1e3", "--1", "99999999999999999999"}

func (g *gen) member() string {
	r := g.r
	switch g.layout.Member() {
	case MemberInt32, MemberInt64:
		switch x := r.IntN(100); {
		case x < 2:
			return badInts[r.IntN(len(badInts))]
		case x < 5:
			return strconv.FormatInt([]int64{math.MinInt32, math.MaxInt32, math.MinInt64, math.MaxInt64, math.MaxInt32 + 1, math.MinInt32 - 1, 0}[r.IntN(7)], 10)
		case x < 7 && g.layout.Member() == MemberInt64:
			return strconv.FormatInt(r.Int64()-math.MaxInt64/2, 10)
		}
		return strconv.Itoa(r.IntN(g.pool) - g.pool/3)
	case MemberUUID:
		if r.IntN(50) == 0 {
			return []string{"00000000-0000-0000-0000-00000000000G", "ABCDEFAB-0000-0000-0000-000000000000", "0000000000000000000000000000000000000", "x"}[r.IntN(4)]
		}
		return g.uuids[r.IntN(len(g.uuids))]
	}
	n := r.IntN(4)
	if g.pool > 120 {
		n = r.IntN(7)
	}
	if g.long > 0 && r.IntN(g.long) == 0 {
		n = 60 + r.IntN(11)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = "ab\x00\xff"[r.IntN(4)]
	}
	return string(b)
}

func (g *gen) score() float64 {
	r := g.r
	switch x := r.IntN(100); {
	case x < 50:
		return float64(r.IntN(8))
	case x < 55:
		return math.Copysign(0, -1)
	case x < 60:
		return math.Inf(1 - 2*r.IntN(2))
	case x < 65:
		return 0.1 * float64(r.IntN(5))
	case x < 70:
		return []float64{1e300, -1e300, math.MaxFloat32, math.SmallestNonzeroFloat64, 0.5, -2.25}[r.IntN(6)]
	}
	return float64(r.IntN(2000)-1000) / 4
}

func (g *gen) flags() AddFlags {
	r := g.r
	var f AddFlags
	switch r.IntN(6) {
	case 0:
		f |= AddNX
	case 1:
		f |= AddXX
	}
	if f&AddNX == 0 {
		switch r.IntN(6) {
		case 0:
			f |= AddGT
		case 1:
			f |= AddLT
		}
	}
	if r.IntN(3) == 0 {
		f |= AddIncr
	}
	return f
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// compareAll checks the whole set against the model.
func compareAll(t *testing.T, z *ZSet, md *model) {
	t.Helper()
	if err := z.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if z.Layout() != md.layout {
		t.Fatalf("layout %v, model %v", z.Layout(), md.layout)
	}
	want := md.sorted()
	if z.Len() != len(want) {
		t.Fatalf("Len %d, model %d", z.Len(), len(want))
	}
	i := 0
	z.Range(0, z.Len(), false, func(m []byte, s float64) bool {
		if string(m) != want[i].m || !sameFloat(s, want[i].s) {
			t.Fatalf("rank %d: got (%q, %v), model (%q, %v)", i, m, s, want[i].m, want[i].s)
		}
		i++
		return true
	})
	if i != len(want) {
		t.Fatalf("Range visited %d of %d", i, len(want))
	}
}

// runModel drives a set and the model with random operations. With a
// large pool it first grows the set (adds weigh more) and then shrinks it.
func runModel(t *testing.T, r *rand.Rand, l Layout, leafCap, branchCap, ops, pool int) {
	runModelOn(t, r, newWithCaps(l, leafCap, branchCap), ops, pool, 0)
}

// runModelOn is runModel on the set z, empty, of any form; one standard
// member in long (if not 0) is 60 to 70 bytes.
func runModelOn(t *testing.T, r *rand.Rand, z *ZSet, ops, pool, long int) {
	l := z.Layout()
	md := newModel(l)
	g := newGen(r, l, pool)
	g.long = long
	maxHeight, maxLen := 0, 0
	defer func() { t.Logf("largest set %d members, height %d", maxLen, maxHeight) }()
	for op := range ops {
		if op%100 == 0 {
			maxHeight, maxLen = max(maxHeight, z.Stats().Height), max(maxLen, z.Len())
		}
		g.layout = md.layout
		x := r.IntN(100)
		switch {
		case pool > 120 && op < ops/2 && x >= 55 && x < 73:
			x = 0 // grow: add instead of removing
		case pool > 120 && op > ops/2 && x < 55 && r.IntN(2) == 0:
			x = 60 // shrink: remove instead of adding
		}
		switch {
		case x < 55:
			m, s, f := g.member(), g.score(), g.flags()
			if r.IntN(50) == 0 {
				s = math.NaN()
			}
			want, werr := md.add(m, s, f)
			got, err := z.Add([]byte(m), s, f)
			if err != werr || got.Added != want.Added || got.Changed != want.Changed || got.Skipped != want.Skipped ||
				!got.Skipped && !sameFloat(got.Score, want.Score) {
				t.Fatalf("op %d Add(%q, %v, %b) = %+v, %v; model %+v, %v", op, m, s, f, got, err, want, werr)
			}
		case x < 70:
			m := g.member()
			if len(md.m) > 0 && r.IntN(2) == 0 {
				for k := range md.m {
					m = k
					break
				}
			}
			_, want := md.m[m]
			if got := z.Remove([]byte(m)); got != want {
				t.Fatalf("op %d Remove(%q) = %v, model %v", op, m, got, want)
			}
			md.del(m)
		case x < 73:
			es := md.sorted()
			start, end := r.IntN(len(es)+3)-1, r.IntN(len(es)+3)-1
			n := z.RemoveRange(start, end)
			start, end = max(start, 0), min(end, len(es))
			want := max(0, end-start)
			if n != want {
				t.Fatalf("op %d RemoveRange(%d, %d) = %d, model %d", op, start, end, n, want)
			}
			if start < end {
				for _, e := range slices.Clone(es[start:end]) {
					md.del(e.m)
				}
			}
		case x < 82:
			m := g.member()
			es := md.sorted()
			ws, wok := md.m[m]
			s, ok := z.Score([]byte(m))
			if ok != wok || ok && !sameFloat(s, ws) {
				t.Fatalf("op %d Score(%q) = %v %v, model %v %v", op, m, s, ok, ws, wok)
			}
			rk, s, ok := z.Rank([]byte(m))
			wr := slices.IndexFunc(es, func(e entry) bool { return e.m == m })
			if ok != wok || ok && (rk != wr || !sameFloat(s, ws)) {
				t.Fatalf("op %d Rank(%q) = %d %v %v, model %d", op, m, rk, s, ok, wr)
			}
		case x < 88:
			es := md.sorted()
			s, incl := g.score(), r.IntN(2) == 0
			want := 0
			for _, e := range es {
				if e.s < s || incl && e.s == s {
					want++
				}
			}
			if got := z.ScoreRank(s, incl); got != want {
				t.Fatalf("op %d ScoreRank(%v, %v) = %d, model %d", op, s, incl, got, want)
			}
		case x < 96:
			es := md.sorted()
			start, end, rev := r.IntN(len(es)+4)-2, r.IntN(len(es)+4)-2, r.IntN(2) == 0
			stop := r.IntN(len(es) + 2)
			var got []entry
			z.Range(start, end, rev, func(m []byte, s float64) bool {
				got = append(got, entry{m: string(m), s: s})
				return len(got) < stop
			})
			start, end = max(start, 0), min(end, len(es))
			var want []entry
			if start < end {
				want = slices.Clone(es[start:end])
				if rev {
					slices.Reverse(want)
				}
			}
			want = want[:min(len(want), max(stop, 1))]
			if !slices.EqualFunc(got, want, func(a, b entry) bool { return a.m == b.m && sameFloat(a.s, b.s) }) {
				t.Fatalf("op %d Range(%d, %d, %v) stop %d = %v, model %v", op, start, end, rev, stop, got, want)
			}
		case x < 98:
			c := z.Clone()
			if err := c.Check(); err != nil {
				t.Fatalf("op %d Clone: %v", op, err)
			}
			compareAll(t, c, md)
			z = c
		default:
			var buf bytes.Buffer
			if err := z.EncodeTo(&buf); err != nil {
				t.Fatal(err)
			}
			d, err := Decode(bufio.NewReader(&buf))
			if err != nil {
				t.Fatalf("op %d Decode: %v", op, err)
			}
			compareAll(t, d, md)
		}
		if z.Len() < 300 || op%37 == 0 {
			if err := z.Check(); err != nil {
				t.Fatalf("op %d: Check: %v", op, err)
			}
		}
		if op%101 == 0 || z.Len() < 64 {
			compareAll(t, z, md)
		}
	}
	compareAll(t, z, md)
}

var allLayouts = []Layout{Standard, Int32Float32, Int32Float64, Int64Float32, Int64Float64, UUIDFloat32, UUIDFloat64}

func TestModel(t *testing.T) {
	seed := testutil.Seed(t)
	for _, l := range allLayouts {
		for _, caps := range [][2]int{{4, 4}, {5, 6}, {8, 8}, {512, 64}} {
			t.Run(fmt.Sprintf("%v/%d-%d", l, caps[0], caps[1]), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(l)<<16|uint64(caps[0])))
				ops := 3000
				if testing.Short() || raceEnabled {
					ops = 1000
				}
				runModel(t, r, l, caps[0], caps[1], ops, 120)
			})
		}
	}
}

// TestModelDeep grows trees of thousands of members with tiny leaves and
// branches (height 6 and more), then shrinks them, so that every split,
// shift, merge and redistribution path runs at every level.
func TestModelDeep(t *testing.T) {
	seed := testutil.Seed(t)
	for _, l := range allLayouts {
		t.Run(l.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(l)))
			ops := 12000
			if testing.Short() || raceEnabled {
				ops = 3000
			}
			runModel(t, r, l, 4, 4, ops, 4000)
		})
	}
}

// TestModelQueue drains sets the way queues and sliding windows do:
// mostly ZREM of the lowest entry (remove's first-leaf path), with
// removals of random members and new members mixed in, so that the first
// leaf is refilled from and merged with its siblings at every level while
// the rest of the tree changes too.
func TestModelQueue(t *testing.T) {
	seed := testutil.Seed(t)
	for _, l := range allLayouts {
		t.Run(l.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(l)))
			z := newWithCaps(l, 6, 4)
			md := newModel(l)
			g := newGen(r, l, 6000)
			for len(md.m) < 1500 {
				m, s := g.member(), g.score()
				want, werr := md.add(m, s, 0)
				if got, err := z.Add([]byte(m), s, 0); err != werr || got.Added != want.Added {
					t.Fatalf("Add(%q, %v) = %+v, %v; model %+v, %v", m, s, got, err, want, werr)
				}
			}
			compareAll(t, z, md)
			for op := 0; len(md.m) > 0; op++ {
				g.layout = md.layout
				m := md.sorted()[0].m
				switch x := r.IntN(10); {
				case x == 0:
					for k := range md.m {
						m = k
						break
					}
				case x == 1 && op < 3000:
					m, s := g.member(), g.score()
					want, werr := md.add(m, s, 0)
					if got, err := z.Add([]byte(m), s, 0); err != werr || got.Added != want.Added {
						t.Fatalf("op %d Add(%q, %v) = %+v, %v; model %+v, %v", op, m, s, got, err, want, werr)
					}
					continue
				}
				if !z.Remove([]byte(m)) {
					t.Fatalf("op %d: Remove(%q) found nothing", op, m)
				}
				md.del(m)
				if op%50 == 0 {
					compareAll(t, z, md)
				}
			}
			compareAll(t, z, md)
		})
	}
}
