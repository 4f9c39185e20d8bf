package packed

import (
	"math"
	"strconv"
	"testing"
)

// Targeted tests of the API's semantics; TestModel covers them at random.

func mustAdd(t *testing.T, z *ZSet, m string, s float64, f AddFlags) AddResult {
	t.Helper()
	res, err := z.Add([]byte(m), s, f)
	if err != nil {
		t.Fatalf("Add(%q, %v, %b): %v", m, s, f, err)
	}
	if err := z.Check(); err != nil {
		t.Fatalf("Check after Add(%q): %v", m, err)
	}
	return res
}

func memberList(z *ZSet) (out []string) {
	z.Range(0, z.Len(), false, func(m []byte, _ float64) bool {
		out = append(out, string(m))
		return true
	})
	return out
}

func TestSignedZero(t *testing.T) {
	for _, l := range allLayouts {
		z := New(l)
		a, b := "1", "2"
		if l.Member() == MemberUUID {
			a, b = "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"
		}
		negZero := math.Copysign(0, -1)
		mustAdd(t, z, b, 0, 0)
		mustAdd(t, z, a, negZero, 0)
		if s, _ := z.Score([]byte(a)); !math.Signbit(s) {
			t.Errorf("%v: -0 stored as %v", l, s)
		}
		if res := mustAdd(t, z, a, 0, 0); res.Changed || !math.Signbit(res.Score) {
			t.Errorf("%v: ZADD 0 onto -0 = %+v, want no change", l, res)
		}
		if res := mustAdd(t, z, a, 0, AddIncr); res.Changed {
			t.Errorf("%v: ZINCRBY 0 onto -0 = %+v, want no change", l, res)
		}
		// -0 and +0 are equal scores: ties are ordered by member.
		if got := memberList(z); got[0] != a || got[1] != b {
			t.Errorf("%v: order %v", l, got)
		}
		if r, _, _ := z.Rank([]byte(b)); r != 1 {
			t.Errorf("%v: rank of %s = %d", l, b, r)
		}
		for _, s := range []float64{0, negZero} {
			if z.ScoreRank(s, false) != 0 || z.ScoreRank(s, true) != 2 {
				t.Errorf("%v: ScoreRank(%v) = %d/%d", l, s, z.ScoreRank(s, false), z.ScoreRank(s, true))
			}
		}
	}
}

func TestInfinities(t *testing.T) {
	z := New(Int32Float32)
	mustAdd(t, z, "1", math.Inf(1), 0)
	mustAdd(t, z, "2", math.Inf(-1), 0)
	mustAdd(t, z, "3", 0, 0)
	if got := memberList(z); got[0] != "2" || got[2] != "1" {
		t.Fatalf("order %v", got)
	}
	if z.Layout() != Int32Float32 {
		t.Fatalf("±inf widened to %v", z.Layout())
	}
	if _, err := z.Add([]byte("1"), math.Inf(-1), AddIncr); err != ErrNaN {
		t.Fatalf("inf + -inf: %v, want ErrNaN", err)
	}
	if s, _ := z.Score([]byte("1")); !math.IsInf(s, 1) {
		t.Fatalf("score changed to %v after ErrNaN", s)
	}
	if _, err := z.Add([]byte("4"), math.NaN(), 0); err != ErrNaN || z.Len() != 3 {
		t.Fatalf("NaN score: %v", err)
	}
	if z.ScoreRank(math.Inf(1), false) != 2 || z.ScoreRank(math.Inf(1), true) != 3 || z.ScoreRank(math.Inf(-1), false) != 0 {
		t.Fatal("ScoreRank at infinities")
	}
}

func TestIntegerExtremes(t *testing.T) {
	z := New(Int64Float64)
	ms := []int64{math.MinInt64, math.MinInt32 - 1, math.MinInt32, -1, 0, 1, math.MaxInt32, math.MaxInt32 + 1, math.MaxInt64}
	for i := len(ms) - 1; i >= 0; i-- {
		mustAdd(t, z, strconv.FormatInt(ms[i], 10), 7, 0)
	}
	got := memberList(z)
	for i, m := range ms {
		if got[i] != strconv.FormatInt(m, 10) {
			t.Fatalf("rank %d: %s, want %d", i, got[i], m)
		}
	}
	z = New(Int32Float32)
	for _, m := range []int64{math.MaxInt32, math.MinInt32, 0} {
		mustAdd(t, z, strconv.FormatInt(m, 10), 1, 0)
	}
	if got := memberList(z); got[0] != "-2147483648" || got[2] != "2147483647" || z.Layout() != Int32Float32 {
		t.Fatalf("INT32 extremes: %v in %v", got, z.Layout())
	}
}

func TestWidening(t *testing.T) {
	for _, tc := range []struct {
		from   Layout
		member string
		score  float64
		flags  AddFlags
		want   Layout
	}{
		{Int32Float32, "1", 1.5, 0, Int32Float32},                 // exact in float32
		{Int32Float32, "1", 0.1, 0, Int32Float64},                 // not exact in float32
		{Int32Float32, "2147483648", 1, 0, Int64Float32},          // beyond INT32
		{Int32Float32, "-2147483649", 0.1, 0, Int64Float64},       // both
		{Int32Float64, "9223372036854775807", 1, 0, Int64Float64}, // beyond INT32
		{UUIDFloat32, "00000000-0000-0000-0000-00000000000a", 1e-300, 0, UUIDFloat64},
		{Int64Float32, "5", 16777217, 0, Int64Float64},             // 2^24+1
		{Int32Float32, "2147483648", 1, AddXX, Int32Float32},       // skipped: no widening
		{Int32Float32, "7", 0.1, AddXX, Int32Float32},              // skipped: no widening
		{Int32Float32, "7", 0.1, AddNX | AddIncr, Int32Float64},    // new member: added
		{Int32Float32, "2147483648", 0.1, AddGT, Int64Float64},     // GT only applies to existing members
		{Int32Float32, "1", math.Copysign(0, -1), 0, Int32Float64}, // order keys hold no -0 (okey.go)
		{Int64Float32, "1", math.Copysign(0, -1), 0, Int64Float32}, // split arrays do
		{Int32Float32, "-4", math.Copysign(0, -1), AddXX, Int32Float64},
	} {
		z := New(tc.from)
		other := "-4"
		if tc.from.Member() == MemberUUID {
			other = "00000000-0000-0000-0000-000000000004"
		}
		mustAdd(t, z, other, 4, 0)
		res := mustAdd(t, z, tc.member, tc.score, tc.flags)
		if z.Layout() != tc.want {
			t.Errorf("%v + (%s, %v, %b): layout %v, want %v", tc.from, tc.member, tc.score, tc.flags, z.Layout(), tc.want)
		}
		if !res.Skipped {
			if s, ok := z.Score([]byte(tc.member)); !ok || math.Float64bits(s) != math.Float64bits(tc.score) {
				t.Errorf("%v + (%s, %v): score %v %v", tc.from, tc.member, tc.score, s, ok)
			}
		}
		if s, _ := z.Score([]byte(other)); s != 4 && other != tc.member {
			t.Errorf("widening lost a member's score: %v", s)
		}
	}
	// An increment that leaves FLOAT32 widens; a skipped GT does not.
	z := New(Int32Float32)
	mustAdd(t, z, "1", 1, 0)
	if res := mustAdd(t, z, "1", 0.1, AddIncr|AddLT); !res.Skipped || z.Layout() != Int32Float32 {
		t.Fatalf("skipped LT increment: %+v in %v", res, z.Layout())
	}
	if res := mustAdd(t, z, "1", 0.1, AddIncr); res.Score != 1.1 || z.Layout() != Int32Float64 {
		t.Fatalf("increment to 1.1: %+v in %v", res, z.Layout())
	}
}

func TestErrMemberLeavesSetUnchanged(t *testing.T) {
	for _, l := range []Layout{Int32Float32, Int64Float64, UUIDFloat32} {
		z := New(l)
		ok := "12"
		if l.Member() == MemberUUID {
			ok = "0123abcd-0000-0000-0000-000000000000"
		}
		mustAdd(t, z, ok, 1, 0)
		for _, bad := range []string{"007", "+1", "-0", " 1", "1.0", "", "abc", "1 ", "0x1", "99999999999999999999",
			"0123ABCD-0000-0000-0000-000000000000", "0123abcd00000000000000000000000000000"} {
			if _, err := z.Add([]byte(bad), 1e-300, AddIncr); err != ErrMember {
				t.Errorf("%v Add(%q) = %v, want ErrMember", l, bad, err)
			}
			if z.CheckMember([]byte(bad)) != ErrMember || z.Remove([]byte(bad)) {
				t.Errorf("%v: %q accepted", l, bad)
			}
			if _, err := z.LexRank([]byte(bad), true); err != ErrMember {
				t.Errorf("%v LexRank(%q) = %v", l, bad, err)
			}
		}
		if z.Len() != 1 || z.Layout() != l {
			t.Errorf("%v: set changed by invalid members: %d %v", l, z.Len(), z.Layout())
		}
	}
}

func TestAddFlags(t *testing.T) {
	z := New(Standard)
	if res := mustAdd(t, z, "a", 1, AddXX); !res.Skipped || z.Len() != 0 {
		t.Fatalf("XX on a new member: %+v", res)
	}
	if res := mustAdd(t, z, "a", 5, AddGT); !res.Added {
		t.Fatalf("GT on a new member: %+v", res)
	}
	if res := mustAdd(t, z, "a", 4, AddGT); !res.Skipped || res.Score != 5 {
		t.Fatalf("GT lower: %+v", res)
	}
	if res := mustAdd(t, z, "a", 6, AddLT); !res.Skipped {
		t.Fatalf("LT higher: %+v", res)
	}
	if res := mustAdd(t, z, "a", 7, AddNX); !res.Skipped {
		t.Fatalf("NX existing: %+v", res)
	}
	if res := mustAdd(t, z, "a", 5, AddXX); res.Changed || res.Skipped || res.Score != 5 {
		t.Fatalf("same score: %+v", res)
	}
	if res := mustAdd(t, z, "a", -2, AddIncr|AddGT); !res.Skipped {
		t.Fatalf("INCR GT lowering: %+v", res)
	}
	if res := mustAdd(t, z, "a", 2, AddIncr|AddGT); !res.Changed || res.Score != 7 {
		t.Fatalf("INCR GT raising: %+v", res)
	}
	// The same member twice in one command: the second sees the first.
	if res := mustAdd(t, z, "b", 1, 0); !res.Added {
		t.Fatal(res)
	}
	if res := mustAdd(t, z, "b", 2, 0); !res.Changed || res.Added {
		t.Fatalf("second of a duplicate pair: %+v", res)
	}
	if res := mustAdd(t, z, "c", 3, AddIncr); !res.Added || res.Score != 3 {
		t.Fatalf("INCR of a new member: %+v", res)
	}
}

func TestLexRank(t *testing.T) {
	z := New(Standard)
	for _, m := range []string{"", "a", "a\x00", "ab", "b", "\xff"} {
		mustAdd(t, z, m, 0, 0)
	}
	for _, tc := range []struct {
		m          string
		excl, incl int
	}{
		{"", 0, 1}, {"a", 1, 2}, {"a\x00", 2, 3}, {"aa", 3, 3}, {"b", 4, 5}, {"\xff\xff", 6, 6},
	} {
		e, _ := z.LexRank([]byte(tc.m), false)
		i, _ := z.LexRank([]byte(tc.m), true)
		if e != tc.excl || i != tc.incl {
			t.Errorf("LexRank(%q) = %d/%d, want %d/%d", tc.m, e, i, tc.excl, tc.incl)
		}
	}
	p := NewWithCapacity(Int32Float32, 4)
	for i := -20; i < 20; i += 2 {
		mustAdd(t, p, strconv.Itoa(i), 1, 0)
	}
	for _, tc := range []struct {
		m          string
		excl, incl int
	}{
		{"-20", 0, 1}, {"-19", 1, 1}, {"0", 10, 11}, {"19", 20, 20}, {"-2147483649", 0, 0}, {"2147483648", 20, 20},
	} {
		e, err := p.LexRank([]byte(tc.m), false)
		i, _ := p.LexRank([]byte(tc.m), true)
		if err != nil || e != tc.excl || i != tc.incl {
			t.Errorf("INT32 LexRank(%q) = %d/%d %v, want %d/%d", tc.m, e, i, err, tc.excl, tc.incl)
		}
	}
}

func TestRemoveRangeWholeLeaves(t *testing.T) {
	for _, l := range []Layout{Int32Float32, Standard} {
		z := newWithCaps(l, 8, 4)
		for i := range 2000 {
			z.Add([]byte(strconv.Itoa(i)), float64(i%97), 0)
		}
		want := memberList(z)
		for _, r := range [][2]int{{100, 1900}, {0, 3}, {-5, 10}, {90, 1000}, {50, 40}} {
			n := z.RemoveRange(r[0], r[1])
			lo, hi := max(r[0], 0), min(r[1], len(want))
			if lo >= hi {
				lo, hi = 0, 0
			}
			if n != hi-lo {
				t.Fatalf("%v RemoveRange(%v) = %d, want %d", l, r, n, hi-lo)
			}
			want = append(want[:lo:lo], want[hi:]...)
			if err := z.Check(); err != nil {
				t.Fatal(err)
			}
			got := memberList(z)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v after RemoveRange(%v): rank %d is %q, want %q", l, r, i, got[i], want[i])
				}
			}
			for _, m := range want {
				if _, ok := z.Score([]byte(m)); !ok {
					t.Fatalf("%q lost from the index", m)
				}
			}
		}
		z.RemoveRange(0, z.Len())
		if z.Len() != 0 || z.Check() != nil || z.Bytes() > 200 {
			t.Fatalf("%v emptied: len %d, %d bytes, %v", l, z.Len(), z.Bytes(), z.Check())
		}
	}
}

// TestSmallSetsAreSmall bounds a one-member tree: the ZSet, the core and a
// first leaf of 8 entries (its header is 120 bytes, allocated as 128: a
// leaf has fields for split arrays, member prefixes and order keys, those
// its layout does not use nil), and a standard set's first arena chunk
// with its entry in the chunk list (32 bytes: the buffer, its garbage
// count and a free-list link).
func TestSmallSetsAreSmall(t *testing.T) {
	z := New(Int32Float32)
	mustAdd(t, z, "1", 1, 0)
	if b := z.Bytes(); b > 376 {
		t.Errorf("one-member INT32 set uses %d bytes", b)
	}
	s := NewWithCapacity(Standard, DefaultLeafCap) // the tree; small.go has the small form
	mustAdd(t, s, "hello", 1, 0)
	if b := s.Bytes(); b > 472 {
		t.Errorf("one-member standard set uses %d bytes", b)
	}
}

func TestRangeClampsAndStops(t *testing.T) {
	z := NewWithCapacity(Int32Float32, 4)
	for i := range 50 {
		mustAdd(t, z, strconv.Itoa(i), float64(i), 0)
	}
	var got []string
	z.Range(45, 100, false, func(m []byte, _ float64) bool { got = append(got, string(m)); return true })
	if len(got) != 5 || got[0] != "45" {
		t.Fatalf("forward clamp: %v", got)
	}
	got = nil
	z.Range(-10, 3, true, func(m []byte, _ float64) bool { got = append(got, string(m)); return true })
	if len(got) != 3 || got[0] != "2" || got[2] != "0" {
		t.Fatalf("reverse clamp: %v", got)
	}
	got = nil
	z.Range(10, 40, true, func(m []byte, _ float64) bool { got = append(got, string(m)); return len(got) < 2 })
	if len(got) != 2 || got[0] != "39" {
		t.Fatalf("early stop: %v", got)
	}
	z.Range(30, 10, false, func([]byte, float64) bool { t.Fatal("empty range called fn"); return false })
}
