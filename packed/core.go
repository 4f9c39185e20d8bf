package packed

import (
	"errors"
	"unsafe"
)

// zcore is the one implementation behind every layout: a counted B+tree of
// (score, member) entries plus a Swiss index from member to score, generic
// over the member representation M and the score type S.
type zcore[M member, S score, V any] struct {
	leafCap   int
	branchCap int
	n         int
	height    int           // branch levels; 0 means the root is a leaf
	root      *branch[M, S] // when height > 0
	rootLeaf  *leaf[M, S]   // when height == 0; nil when the set is empty
	idx       swiss[M, V]
	ar        arena // standard layout only
}

// Internal signals from a core to ZSet.Add: the operation needs a wider
// layout. The core has changed nothing.
var (
	errWidenMember = errors.New("packed: member needs INT64")
	errWidenScore  = errors.New("packed: score needs FLOAT64")
)

// DefaultLeafCap is the leaf capacity New uses.
const DefaultLeafCap = 512

// MaxLeafCap is the largest leaf capacity NewWithCapacity accepts.
const MaxLeafCap = 1 << 16

// makers builds each layout's core: the layouts differ only in the type
// parameters.
var makers = [numLayouts]func(leafCap, branchCap int) core{
	Standard:     newZcore[sref, float64, struct{}],
	Int32Float32: newZcore[int32, float32, float32],
	Int32Float64: newZcore[int32, float64, float64],
	Int64Float32: newZcore[int64, float32, float32],
	Int64Float64: newZcore[int64, float64, float64],
	UUIDFloat32:  newZcore[uuid, float32, float32],
	UUIDFloat64:  newZcore[uuid, float64, float64],
}

func newCore(l Layout, leafCap, branchCap int) core { return makers[l](leafCap, branchCap) }

func newZcore[M member, S score, V any](leafCap, branchCap int) core {
	return &zcore[M, S, V]{leafCap: leafCap, branchCap: branchCap}
}

func (c *zcore[M, S, V]) len() int { return c.n }

func (c *zcore[M, S, V]) caps() (int, int) { return c.leafCap, c.branchCap }

// lookup parses member text into p and finds it in the index.
func (c *zcore[M, S, V]) lookup(text []byte, p *probe[M]) (h uint64, slot int, found bool, st parseStatus) {
	if st = parseProbe(text, p); st != parseOK {
		return 0, -1, false, st
	}
	h = hashProbe(p)
	slot, found = c.findSlot(h, p)
	return h, slot, found, st
}

func (c *zcore[M, S, V]) add(text []byte, sc float64, f AddFlags) (AddResult, error) {
	if c.idx.mv != nil {
		c.step()
	}
	var p probe[M]
	h, slot, found, st := c.lookup(text, &p)
	switch {
	case st == parseBad:
		return AddResult{}, ErrMember
	case sc != sc:
		return AddResult{}, ErrNaN
	case st == parseWiden:
		if f&AddXX != 0 {
			return AddResult{Skipped: true}, nil
		}
		return AddResult{}, errWidenMember
	}
	if found {
		cur := float64(c.slotScore(slot))
		if f == 0 && sc == cur { // a plain ZADD of the same score: the common no-op, first
			return AddResult{Score: cur}, nil
		}
		return c.update(&p, slot, cur, sc, f)
	}
	if f&AddXX != 0 {
		return AddResult{Skipped: true}, nil
	}
	if !fits[M, S](sc) {
		return AddResult{}, errWidenScore
	}
	slot = c.reserveSlot(h, slot)
	m := p.m
	if kindOf[M]() == MemberBytes {
		r, ok := c.ar.add(p.b, sc)
		if !ok {
			c.compact()
			if r, ok = c.ar.add(p.b, sc); !ok {
				return AddResult{}, ErrTooLarge
			}
		}
		m = refMember[M](r)
	}
	c.insert(S(sc), &p, m)
	c.commitSlot(slot, h, m, S(sc))
	return AddResult{Score: sc, Added: true}, nil
}

// update applies Add to an existing member, found in slot with score cur.
func (c *zcore[M, S, V]) update(p *probe[M], slot int, cur, sc float64, f AddFlags) (AddResult, error) {
	res, done, err := decideUpdate(cur, sc, f)
	if done || err != nil {
		return res, err
	}
	sc = res.Score
	if !fits[M, S](sc) {
		return AddResult{}, errWidenScore
	}
	m := c.slotMember(slot)
	c.rescore(S(cur), S(sc), p, m)
	c.setSlotScore(slot, m, S(sc))
	return res, nil
}

// decideUpdate decides Add of an existing member whose score is cur, for
// both forms of a set: done with its result (skipped, unchanged or an
// error), or a change to res.Score, which the caller makes.
func decideUpdate(cur, sc float64, f AddFlags) (res AddResult, done bool, err error) {
	if f&AddNX != 0 {
		return AddResult{Score: cur, Skipped: true}, true, nil
	}
	if f&AddIncr != 0 {
		if sc += cur; sc != sc {
			return AddResult{}, true, ErrNaN
		}
	}
	if f&AddGT != 0 && !(sc > cur) || f&AddLT != 0 && !(sc < cur) {
		return AddResult{Score: cur, Skipped: true}, true, nil
	}
	if sc == cur { // Redis compares with ==: 0 onto -0 is no change
		return AddResult{Score: cur}, true, nil
	}
	return AddResult{Score: sc, Changed: true}, false, nil
}

func (c *zcore[M, S, V]) remove(text []byte) bool {
	var p probe[M]
	_, slot, found, _ := c.lookup(text, &p)
	if !found {
		return false
	}
	s, m := c.slotScore(slot), c.slotMember(slot)
	var pa path[M, S]
	l, i := c.first(&pa), 0
	if l.key(0) != m {
		l = c.descend(s, &p, &pa)
		i = c.leafFind(l, s, &p, m)
	}
	c.release(m)
	c.removeAt(l, &pa, i)
	c.eraseSlot(slot)
	c.afterRemove(1)
	return true
}

// release accounts for a removed member's arena record.
func (c *zcore[M, S, V]) release(m M) {
	if kindOf[M]() == MemberBytes {
		c.ar.release(*asRef(&m))
	}
}

// afterRemove returns memory after the removal of removed members: it
// shrinks a sparse index and reclaims the garbage of an arena that is
// mostly garbage (reclaim.go).
func (c *zcore[M, S, V]) afterRemove(removed int) {
	if c.n == 0 {
		c.idx, c.ar = swiss[M, V]{}, arena{}
		return
	}
	c.maybeShrink()
	if kindOf[M]() == MemberBytes && c.ar.wasteful() {
		c.reclaim(removed)
	}
}

func (c *zcore[M, S, V]) score(text []byte) (float64, bool) {
	var p probe[M]
	_, slot, found, _ := c.lookup(text, &p)
	if !found {
		return 0, false
	}
	return float64(c.slotScore(slot)), true
}

func (c *zcore[M, S, V]) rank(text []byte) (int, float64, bool) {
	var p probe[M]
	_, slot, found, _ := c.lookup(text, &p)
	if !found {
		return 0, 0, false
	}
	s := c.slotScore(slot)
	var pa path[M, S]
	l := c.descend(s, &p, &pa)
	i := c.leafFind(l, s, &p, c.slotMember(slot))
	return pa.before() + i, float64(s), true
}

func (c *zcore[M, S, V]) scoreRank(x float64, inclusive bool) int {
	if inclusive {
		return c.prefix(func(s S, _ *M) bool { return float64(s) <= x })
	}
	return c.prefix(func(s S, _ *M) bool { return float64(s) < x })
}

// lexRank counts the members before text as a search by halving finds
// them. With one score the members are in order and the tree's descent
// finds the one boundary. With several they are not, and a descent's
// answer would depend on the tree's shape, which differs between a node
// that applied every write and one restored from a snapshot (bulk-loaded):
// ZREMRANGEBYLEX, applied on every node, would remove other members there.
// So it halves ranks, selecting each, as the small form does (small.go):
// the answer depends on the entries alone.
func (c *zcore[M, S, V]) lexRank(text []byte, inclusive bool) int {
	var p probe[M]
	if parseProbe(text, &p) != parseOK || c.n == 0 {
		return 0
	}
	in := func(m *M) bool {
		if inclusive {
			return c.cmpMember(&p, m) >= 0
		}
		return c.cmpMember(&p, m) > 0
	}
	var pa path[M, S]
	l, i := c.selectPath(0, &pa)
	first := l.score(i)
	if l, i = c.selectPath(c.n-1, &pa); l.score(i) == first {
		return c.prefix(func(_ S, m *M) bool { return in(m) })
	}
	lo, hi := 0, c.n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		l, i := c.selectPath(h, &pa)
		if m := l.key(i); in(&m) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

func (c *zcore[M, S, V]) iterate(start, end int, reverse bool, fn func(m []byte, s float64) bool) {
	if start >= end {
		return
	}
	var pa path[M, S]
	var buf []byte
	if kindOf[M]() != MemberBytes {
		buf = make([]byte, 0, 40)
	}
	if reverse {
		l, i := c.selectPath(end-1, &pa)
		for r := end - 1; r >= start; r-- {
			if !fn(c.text(buf, l.key(i)), float64(l.score(i))) {
				return
			}
			if i--; i < 0 && l.prev != nil {
				l = l.prev
				i = l.n() - 1
			}
		}
		return
	}
	l, i := c.selectPath(start, &pa)
	for r := start; r < end; r++ {
		if !fn(c.text(buf, l.key(i)), float64(l.score(i))) {
			return
		}
		if i++; i == l.n() && l.next != nil {
			l, i = l.next, 0
		}
	}
}

// text returns a stored member's text: standard members straight from the
// arena, packed members formatted into buf.
func (c *zcore[M, S, V]) text(buf []byte, m M) []byte {
	if kindOf[M]() == MemberBytes {
		return c.ar.get(*asRef(&m))
	}
	return c.appendMember(buf[:0], m)
}

// removeRange removes ranks [start, end) a leaf at a time: each round
// removes the part of one leaf that is in the range with one shift, then
// merges or drops the leaf as a single-entry removal would.
func (c *zcore[M, S, V]) removeRange(start, end int) int {
	left := end - start
	for left > 0 {
		var pa path[M, S]
		l, i := c.selectPath(start, &pa)
		j := min(l.n(), i+left)
		for k := i; k < j; k++ {
			var p probe[M]
			m := l.key(k)
			c.stored(m, &p)
			slot, found := c.findSlot(hashProbe(&p), &p)
			if !found || c.slotScore(slot) != l.score(k) {
				panic("packed: index and tree disagree")
			}
			c.release(m)
			c.eraseSlot(slot)
		}
		pa.adjust(i - j)
		c.n -= j - i
		l.removeRange(i, j)
		c.fixLeaf(l, &pa)
		left -= j - i
	}
	c.afterRemove(end - start)
	return end - start
}

// Small sets have no index. While a set fits in its one leaf (at most
// smallMax members), a member lookup scans the leaf, which is as fast as
// hashing and saves the index's allocation; the slot of a member is then
// its position in the leaf. The index is built when the set outgrows that
// and kept until the set is empty.
const smallMax = 8

func (c *zcore[M, S, V]) indexed() bool { return c.idx.groups != nil }

// smallLimit is the most members an unindexed set holds.
func (c *zcore[M, S, V]) smallLimit() int { return min(smallMax, c.leafCap-c.leafCap/8) }

// findSlot is find for indexed and unindexed sets alike.
func (c *zcore[M, S, V]) findSlot(h uint64, p *probe[M]) (int, bool) {
	if c.indexed() {
		if c.idx.mv != nil {
			return c.findMoving(h, p)
		}
		return c.find(h, p)
	}
	if c.rootLeaf != nil {
		l := c.rootLeaf
		for i := range l.n() {
			if m := l.key(i); c.eqMember(p, &m) {
				return i, true
			}
		}
	}
	return -1, false
}

func (c *zcore[M, S, V]) slotScore(slot int) S {
	switch {
	case !c.indexed():
		return c.rootLeaf.score(slot)
	case kindOf[M]() == MemberBytes:
		return S(c.ar.score(*asRef(c.idx.key(slot))))
	}
	v := c.idx.val(slot)
	return *(*S)(unsafe.Pointer(&v))
}

// slotMember returns the stored member in a slot.
func (c *zcore[M, S, V]) slotMember(slot int) M {
	if c.indexed() {
		return *c.idx.key(slot)
	}
	return c.rootLeaf.key(slot)
}

// setSlotScore records the new score of member m, found in slot before the
// tree moved it: in its arena record (standard layout), in its index slot
// (packed layouts), or nowhere else (an unindexed packed set's only copy
// of the score is in the leaf, already updated).
func (c *zcore[M, S, V]) setSlotScore(slot int, m M, s S) {
	switch {
	case kindOf[M]() == MemberBytes:
		c.ar.setScore(*asRef(&m), float64(s))
	case c.indexed():
		c.idx.setVal(slot, valueOf[S, V](s))
	}
}

func (c *zcore[M, S, V]) eraseSlot(slot int) {
	if c.indexed() {
		c.idx.erase(slot)
		if c.idx.mv != nil {
			c.step()
		}
	}
}

// reserveSlot is reserve for indexed and unindexed sets; an unindexed set
// that is full builds its index.
func (c *zcore[M, S, V]) reserveSlot(h uint64, slot int) int {
	if !c.indexed() {
		if c.n < c.smallLimit() {
			return -1
		}
		c.buildIndex(c.n + 1)
		return c.idx.freshSlot(h)
	}
	return c.reserve(h, slot)
}

func (c *zcore[M, S, V]) commitSlot(slot int, h uint64, m M, s S) {
	if c.indexed() {
		c.idx.commit(slot, h, m, valueOf[S, V](s))
	}
}

// V, what an index slot stores beside the member, is the score (V = S) in
// packed layouts and nothing (V = struct{}) in the standard layout, whose
// scores live in the arena records the slots point to (see arena.go).

// valueOf converts a score to the index's value type.
func valueOf[S score, V any](s S) (v V) {
	if unsafe.Sizeof(v) != 0 {
		*(*S)(unsafe.Pointer(&v)) = s
	}
	return v
}

// buildIndex indexes every member, sized for n.
func (c *zcore[M, S, V]) buildIndex(n int) {
	c.idx.init(groupsFor(n))
	c.walk(nil, func(l *leaf[M, S]) {
		for i := range l.n() {
			var p probe[M]
			m := l.key(i)
			c.stored(m, &p)
			h := hashProbe(&p)
			c.idx.commit(c.idx.freshSlot(h), h, m, valueOf[S, V](l.score(i)))
		}
	})
}
