package packed

import (
	"bufio"
	"fmt"
	"iter"
	"math"
)

// AddFlags select ZADD's conditional behaviour.
type AddFlags uint8

// ZADD options. NX and XX are exclusive; GT and LT are exclusive and not
// allowed with NX (callers validate combinations).
const (
	AddNX   AddFlags = 1 << iota // only add new members
	AddXX                        // only update existing members
	AddGT                        // update only when the new score is greater
	AddLT                        // update only when the new score is less
	AddIncr                      // score is an increment
)

// AddResult reports what Add did.
type AddResult struct {
	Score   float64 // the member's score after the call (valid unless Skipped)
	Added   bool    // a new member was inserted
	Changed bool    // an existing member's score changed
	Skipped bool    // NX, XX, GT or LT prevented the operation
}

// ZSet is one sorted set. Its zero value is not usable; call New.
type ZSet struct {
	layout Layout
	// shell: the set was made in its small form and its allocation holds
	// the small struct too (smallSet), for its Bytes.
	shell bool
	c     core
}

// core is what every layout implementation provides. Members cross this
// boundary as text (already validated for the layout).
type core interface {
	len() int
	add(m []byte, score float64, f AddFlags) (AddResult, error)
	remove(m []byte) bool
	score(m []byte) (float64, bool)
	rank(m []byte) (int, float64, bool)
	scoreRank(s float64, inclusive bool) int
	lexRank(m []byte, inclusive bool) int
	iterate(start, end int, reverse bool, fn func(m []byte, s float64) bool)
	removeRange(start, end int) int
	bytes() int
	check() error
	stats() Stats
	caps() (leafCap, branchCap int)
	clone() core
	snapshot() viewCore
	encode(w *bufio.Writer) error
	load(n int, entries iter.Seq2[[]byte, float64]) error
	decode(r *bufio.Reader, n int) (negZero [][]byte, err error)
}

// New returns an empty sorted set with the given layout and the default
// leaf capacity; a standard set starts in its small form (small.go).
func New(l Layout) *ZSet {
	if l == Standard {
		return newSmallSet()
	}
	return NewWithCapacity(l, DefaultLeafCap)
}

// NewWithCapacity returns an empty sorted set whose leaves hold up to
// leafCap entries (4 to MaxLeafCap). Small capacities make deep trees from
// few members, which tests use; see doc.go for the trade-off.
func NewWithCapacity(l Layout, leafCap int) *ZSet {
	return newWithCaps(l, leafCap, maxFanout)
}

func newWithCaps(l Layout, leafCap, branchCap int) *ZSet {
	if !l.Valid() {
		panic("packed: invalid layout")
	}
	if leafCap < 4 || leafCap > MaxLeafCap || branchCap < 4 || branchCap > maxFanout {
		panic(fmt.Sprintf("packed: invalid capacities %d/%d", leafCap, branchCap))
	}
	return &ZSet{layout: l, c: newCore(l, leafCap, branchCap)}
}

// Layout returns the set's current layout (which widening may change).
func (z *ZSet) Layout() Layout { return z.layout }

// Len returns the number of members.
func (z *ZSet) Len() int { return z.c.len() }

// CheckMember reports ErrMember if m can never be held by this set's layout
// (even after widening). Callers use it to validate a whole command before
// changing anything.
func (z *ZSet) CheckMember(m []byte) error {
	_, err := z.memberLayout(m)
	return err
}

// memberLayout returns the layout needed to hold m (z.layout or its member
// widening), or ErrMember.
func (z *ZSet) memberLayout(m []byte) (Layout, error) {
	switch z.layout.Member() {
	case MemberInt32:
		v, ok := parseCanonicalInt(m)
		if !ok {
			return 0, ErrMember
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return z.layout.widenMember(), nil
		}
	case MemberInt64:
		if _, ok := parseCanonicalInt(m); !ok {
			return 0, ErrMember
		}
	case MemberUUID:
		if _, ok := parseUUID(m); !ok {
			return 0, ErrMember
		}
	}
	return z.layout, nil
}

// Add inserts m with score (or increments it under AddIncr), honouring NX,
// XX, GT and LT. It widens the layout when m or the resulting score needs it.
// On error (ErrMember, ErrNaN) the set is unchanged. score must not be NaN.
//
// Widening happens only when the operation will store the member or score:
// an XX, NX, GT or LT condition that skips the operation never widens.
func (z *ZSet) Add(m []byte, score float64, f AddFlags) (AddResult, error) {
	if invariants {
		defer z.mustCheck()
	}
	for {
		res, err := z.c.add(m, score, f)
		switch err {
		case errWidenMember:
			z.convert(z.layout.widenMember())
		case errWidenScore:
			z.convert(z.layout.widenScore())
		case errGrowSmall:
			z.convert(z.layout)
		default:
			return res, err
		}
	}
}

// convert rebuilds the set in layout nl, which can hold every member and
// score exactly and orders them the same way, with a bulk load into a tree
// (a widened layout, or a small set's own layout when it outgrows its
// small form).
func (z *ZSet) convert(nl Layout) {
	lc, bc := z.c.caps()
	nc := newCore(nl, lc, bc)
	err := nc.load(z.c.len(), func(yield func([]byte, float64) bool) {
		z.c.iterate(0, z.c.len(), false, yield)
	})
	if err != nil {
		panic("packed: conversion failed: " + err.Error())
	}
	z.layout, z.c = nl, nc
}

// Remove deletes m and reports whether it was present.
func (z *ZSet) Remove(m []byte) bool {
	if invariants {
		defer z.mustCheck()
	}
	return z.c.remove(m)
}

// Score returns m's score.
func (z *ZSet) Score(m []byte) (float64, bool) {
	return z.c.score(m)
}

// Rank returns m's 0-based ascending rank and its score.
func (z *ZSet) Rank(m []byte) (rank int, score float64, ok bool) {
	return z.c.rank(m)
}

// ScoreRank returns the number of members whose score is < s, or <= s when
// inclusive. s may be ±Inf.
func (z *ZSet) ScoreRank(s float64, inclusive bool) int { return z.c.scoreRank(s, inclusive) }

// LexRank returns the number of members that order before m (or at or
// before m when inclusive), comparing members only. It is meaningful when
// all scores are equal, as with Redis's lex commands. In packed layouts the
// member order is numeric; m must then be a valid member (ErrMember).
func (z *ZSet) LexRank(m []byte, inclusive bool) (int, error) {
	if z.layout.Member() != MemberBytes {
		if z.layout.Member() == MemberInt32 {
			if v, ok := parseCanonicalInt(m); ok && (v < math.MinInt32 || v > math.MaxInt32) {
				// Outside INT32: every member is above or below it.
				if v < 0 {
					return 0, nil
				}
				return z.c.len(), nil
			}
		}
		if _, err := z.memberLayout(m); err != nil {
			return 0, err
		}
	}
	return z.c.lexRank(m, inclusive), nil
}

// Range calls fn for ranks [start, end) in ascending order, or when reverse
// from end-1 down to start, until fn returns false. m is only valid during
// the call. Ranks are clamped to [0, Len()].
func (z *ZSet) Range(start, end int, reverse bool, fn func(m []byte, s float64) bool) {
	start, end = clampRange(start, end, z.c.len())
	if start < end {
		z.c.iterate(start, end, reverse, fn)
	}
}

// RemoveRange deletes ranks [start, end) and returns how many it removed.
func (z *ZSet) RemoveRange(start, end int) int {
	if invariants {
		defer z.mustCheck()
	}
	start, end = clampRange(start, end, z.c.len())
	if start >= end {
		return 0
	}
	return z.c.removeRange(start, end)
}

func clampRange(start, end, n int) (int, int) {
	if start < 0 {
		start = 0
	}
	if end > n {
		end = n
	}
	return start, end
}

// Bytes returns the bytes allocated for the set: every leaf, branch, index
// and arena allocation and the headers, each rounded up to the size the Go
// allocator really uses. It walks the leaves, O(n / leaf capacity).
func (z *ZSet) Bytes() int { return z.header() + z.c.bytes() }

// header is the allocation of the ZSet itself: with the small struct when
// the set was made small.
func (z *ZSet) header() int {
	if z.shell {
		return allocSize(sizeOf[smallSet](), true)
	}
	return allocSize(sizeOf[ZSet](), true)
}

// Stats describes the set's structure and memory.
func (z *ZSet) Stats() Stats {
	st := z.c.stats()
	st.Bytes += z.header()
	return st
}

// Clone returns a deep copy.
func (z *ZSet) Clone() *ZSet {
	c := z.c.clone()
	if s, ok := c.(*small); ok {
		d := newSmallSet()
		*d.c.(*small) = *s
		return d
	}
	return &ZSet{layout: z.layout, c: c}
}

// mustCheck panics if an invariant is broken (invariants builds only).
func (z *ZSet) mustCheck() {
	if err := z.Check(); err != nil {
		panic("packed: invariant broken: " + err.Error())
	}
}

// Check verifies the structure's invariants (counts, order, fences, leaf
// links and fill, index agreement) in O(n).
func (z *ZSet) Check() error { return z.c.check() }
