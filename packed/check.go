package packed

import (
	"encoding/binary"
	"fmt"
	"math"
)

// check verifies every invariant of the tree, the index and the arena:
// counts, order, fences, leaf links, fill, and that the index holds exactly
// the tree's members with bit-identical scores. It is O(n).
func (c *zcore[M, S, V]) check() error {
	var leaves []*leaf[M, S]
	total, err := c.checkNode(c.root, c.rootLeaf, 0, &leaves, nil, nil)
	if err != nil {
		return err
	}
	if total != c.n {
		return fmt.Errorf("tree holds %d entries, count says %d", total, c.n)
	}
	if err := c.checkLinks(leaves); err != nil {
		return err
	}
	if err := c.checkArena(leaves); err != nil {
		return err
	}
	return c.checkIndex(leaves)
}

// checkArena verifies a standard set's arena: its chunks hold whole
// records that add up to its used bytes; the chunk numbers held are
// exactly those a record longer than a chunk spans after its own; no free
// number is below the hint or last; the garbage counts add up and leave
// room for every live member's record in its chunk; and every member and
// fence refers to the start of a record.
func (c *zcore[M, S, V]) checkArena(leaves []*leaf[M, S]) error {
	if kindOf[M]() != MemberBytes {
		return nil
	}
	a := &c.ar
	starts := map[uint32]int{} // record offset: size
	spanned := map[int]bool{}
	used, garbage := 0, 0
	for k, ch := range a.chunks {
		if ch.b == nil {
			continue
		}
		for off := 0; off < len(ch.b); {
			r := srefAt(k<<chunkShift | off)
			if !a.valid(r) {
				return fmt.Errorf("chunk %d: no whole record at offset %d of %d", k, off, len(ch.b))
			}
			starts[uint32(k<<chunkShift|off)] = a.size(r)
			off += a.size(r)
		}
		for x := k + 1; x < k+chunksFor(len(ch.b)); x++ {
			if x >= len(a.chunks) || a.chunks[x].b != nil {
				return fmt.Errorf("chunk %d's record spans chunk number %d, which is not kept for it", k, x)
			}
			spanned[x] = true
		}
		if int(ch.dead) > len(ch.b) {
			return fmt.Errorf("chunk %d: %d bytes of garbage in %d", k, ch.dead, len(ch.b))
		}
		used += len(ch.b)
		garbage += int(ch.dead)
	}
	if used != a.used || garbage != a.garbage {
		return fmt.Errorf("arena counts %d bytes used, %d garbage; its chunks hold %d and %d", a.used, a.garbage, used, garbage)
	}
	for k, ch := range a.chunks {
		switch {
		case ch.held != spanned[k]:
			return fmt.Errorf("chunk number %d held %v, spanned by a record %v", k, ch.held, spanned[k])
		case ch.b == nil && !ch.held && (k < int(a.hint) || k == len(a.chunks)-1):
			return fmt.Errorf("chunk number %d is free, below the hint %d or last of %d", k, a.hint, len(a.chunks))
		case ch.b == nil && ch.dead != 0:
			return fmt.Errorf("chunk number %d has no buffer and %d bytes of garbage", k, ch.dead)
		}
	}
	if len(a.chunks) > 0 && a.chunks[a.tail].b == nil {
		return fmt.Errorf("the tail, chunk %d, has no buffer", a.tail)
	}
	live := make([]int, len(a.chunks))
	for _, l := range leaves {
		for i := range l.n() {
			m := l.key(i)
			size, ok := starts[binary.LittleEndian.Uint32(asRef(&m)[:])]
			if !ok {
				return fmt.Errorf("member %d of a leaf refers to no record", i)
			}
			live[asRef(&m).chunk()] += size
		}
	}
	for k, ch := range a.chunks {
		if live[k]+int(ch.dead) > len(ch.b) {
			return fmt.Errorf("chunk %d: %d bytes of live records and %d of garbage in %d", k, live[k], ch.dead, len(ch.b))
		}
	}
	var err error
	c.walk(func(b *branch[M, S]) {
		for i := 1; i < b.n; i++ {
			if _, ok := starts[binary.LittleEndian.Uint32(asRef(&b.sepM[i])[:])]; !ok && err == nil {
				err = fmt.Errorf("fence %d refers to no record", i)
			}
		}
	}, nil)
	return err
}

// fence is a key a subtree's keys must respect.
type fence[M member, S score] struct {
	s S
	m M
}

func (c *zcore[M, S, V]) cmpKeys(as S, am M, bs S, bm M) int {
	if as != bs {
		if as < bs {
			return -1
		}
		return 1
	}
	var p probe[M]
	c.stored(am, &p)
	return c.cmpMember(&p, &bm)
}

// checkNode checks the subtree rooted at b (or leaf l) at depth d, whose
// keys must be >= lo and < hi (nil: unbounded), and returns its size.
func (c *zcore[M, S, V]) checkNode(b *branch[M, S], l *leaf[M, S], d int, leaves *[]*leaf[M, S], lo, hi *fence[M, S]) (int, error) {
	if d == c.height {
		if l == nil {
			if d == 0 && c.n == 0 {
				return 0, nil
			}
			return 0, fmt.Errorf("missing leaf at depth %d", d)
		}
		*leaves = append(*leaves, l)
		return l.n(), c.checkLeaf(l, d, lo, hi)
	}
	if b == nil {
		return 0, fmt.Errorf("missing branch at depth %d", d)
	}
	minN := c.minBranch()
	if d == 0 {
		minN = 2
	}
	if b.n < minN || b.n > c.branchCap {
		return 0, fmt.Errorf("branch at depth %d has %d children (want %d..%d)", d, b.n, minN, c.branchCap)
	}
	total := 0
	for i := range b.n {
		clo, chi := lo, hi
		if i > 0 {
			clo = &fence[M, S]{b.sepS[i], b.sepM[i]}
			if okeyLeaves[M, S]() && b.sepK[i] != okeyOf(b.sepS[i], b.sepM[i]) {
				return 0, fmt.Errorf("fence %d at depth %d has order key %#x, not its own", i, d, b.sepK[i])
			}
			if kindOf[M]() == MemberBytes && !c.ar.valid(*asRef(&b.sepM[i])) {
				return 0, fmt.Errorf("fence %d at depth %d points outside the arena", i, d)
			}
			if kindOf[M]() == MemberBytes && b.sepP[i] != memberPrefix(c.ar.get(*asRef(&b.sepM[i]))) {
				return 0, fmt.Errorf("fence %d at depth %d has prefix %#x, not its member's", i, d, b.sepP[i])
			}
		}
		if i+1 < b.n {
			chi = &fence[M, S]{b.sepS[i+1], b.sepM[i+1]}
		}
		n, err := c.checkNode(b.kids[i], b.leaves[i], d+1, leaves, clo, chi)
		if err != nil {
			return 0, err
		}
		if n != b.counts[i] {
			return 0, fmt.Errorf("child %d at depth %d holds %d entries, count says %d", i, d, n, b.counts[i])
		}
		total += n
	}
	return total, nil
}

func (c *zcore[M, S, V]) checkLeaf(l *leaf[M, S], d int, lo, hi *fence[M, S]) error {
	n := l.n()
	okeys := okeyLeaves[M, S]()
	if l.lo < 0 || l.lo > l.hi || int(l.hi) > l.capacity() || len(l.scores) != len(l.keys) || okeys != (l.ents != nil) || okeys == (l.keys != nil) || (kindOf[M]() == MemberBytes) != (l.pfx != nil) {
		return fmt.Errorf("leaf bounds [%d,%d) capacity %d", l.lo, l.hi, l.capacity())
	}
	if l.capacity() > c.leafCap || d > 0 && (n == 0 || l.capacity() != c.leafCap && l.capacity() != c.smallCap()) {
		return fmt.Errorf("leaf at depth %d holds %d of capacity %d (tree capacity %d)", d, n, l.capacity(), c.leafCap)
	}
	ks, ss := make([]M, n), make([]S, n)
	for i := range n {
		ks[i], ss[i] = l.key(i), l.score(i)
		if okeys && okeyOf(ss[i], ks[i]) != l.ents[int(l.lo)+i] {
			return fmt.Errorf("order key %#x does not round-trip", l.ents[int(l.lo)+i])
		}
	}
	for i := range ks {
		if ss[i] != ss[i] {
			return fmt.Errorf("NaN score in leaf")
		}
		if kindOf[M]() == MemberBytes {
			if !c.ar.valid(*asRef(&ks[i])) {
				return fmt.Errorf("member points outside the arena")
			}
			if len(l.pfx) != len(l.keys) || l.pfx[int(l.lo)+i] != memberPrefix(c.ar.get(*asRef(&ks[i]))) {
				return fmt.Errorf("member %q has prefix %#x in its leaf", c.text(nil, ks[i]), l.pfx[int(l.lo)+i])
			}
			if s := c.ar.score(*asRef(&ks[i])); math.Float64bits(s) != math.Float64bits(float64(ss[i])) {
				return fmt.Errorf("member %q scores %v in the tree, %v in its arena record", c.text(nil, ks[i]), ss[i], s)
			}
		}
		if i > 0 && c.cmpKeys(ss[i-1], ks[i-1], ss[i], ks[i]) >= 0 {
			return fmt.Errorf("leaf entries %d and %d out of order", i-1, i)
		}
	}
	if n > 0 && lo != nil && c.cmpKeys(ss[0], ks[0], lo.s, lo.m) < 0 {
		return fmt.Errorf("leaf starts below its fence")
	}
	if n > 0 && hi != nil && c.cmpKeys(ss[n-1], ks[n-1], hi.s, hi.m) >= 0 {
		return fmt.Errorf("leaf ends at or above the next fence")
	}
	return nil
}

func (c *zcore[M, S, V]) checkLinks(leaves []*leaf[M, S]) error {
	for i, l := range leaves {
		var prev, next *leaf[M, S]
		if i > 0 {
			prev = leaves[i-1]
		}
		if i+1 < len(leaves) {
			next = leaves[i+1]
		}
		if l.prev != prev || l.next != next {
			return fmt.Errorf("leaf %d has wrong neighbour links", i)
		}
	}
	return nil
}

func (c *zcore[M, S, V]) checkIndex(leaves []*leaf[M, S]) error {
	if !c.indexed() {
		if c.n > c.smallLimit() || c.height > 0 {
			return fmt.Errorf("unindexed set of %d members, height %d", c.n, c.height)
		}
		return nil
	}
	x := &c.idx
	if x.count != c.n {
		return fmt.Errorf("index holds %d members, tree %d", x.count, c.n)
	}
	// A member's slot holds its fingerprint and is where its own lookup
	// leads (slot as findSlot numbers it: old ones marked oldSlot).
	member := func(g *group[M, V], j, slot int) error {
		var p probe[M]
		c.stored(g.keys[j], &p)
		h := hashProbe(&p)
		if b := g.ctrl >> (8 * j) & 0xff; fingerprint(h) != b {
			return fmt.Errorf("slot %#x has fingerprint %#x, member hashes to %#x", slot, b, fingerprint(h))
		}
		if found, ok := c.findSlot(h, &p); !ok || found != slot {
			return fmt.Errorf("slot %#x is not found by its own probe", slot)
		}
		return nil
	}
	full, tombs := 0, 0
	for gi := range x.groups {
		g := &x.groups[gi]
		for j := range groupSize {
			switch b := g.ctrl >> (8 * j) & 0xff; b {
			case ctrlEmpty:
			case ctrlTomb:
				tombs++
			default:
				if b < 0x80 {
					return fmt.Errorf("bad control byte %#x", b)
				}
				full++
				if err := member(g, j, gi*8+j); err != nil {
					return err
				}
			}
		}
	}
	if tombs != x.tombs || len(x.groups) > 0 && x.growthLeft != 7*len(x.groups)-full-tombs {
		return fmt.Errorf("index counts: full %d tombs %d/%d growthLeft %d", full, tombs, x.tombs, x.growthLeft)
	}
	// A resize in progress: the old table's members not yet moved, each
	// found by its own probe, none in the groups already moved.
	old, next := x.oldGroups(), 0
	if x.mv != nil {
		if next = x.mv.next; next >= len(old) || x.mv.step < 1 {
			return fmt.Errorf("resize at group %d of %d, step %d", next, len(old), x.mv.step)
		}
	}
	for gi := range old {
		g := &old[gi]
		for m := matchFull(g.ctrl); m != 0; m &= m - 1 {
			if gi < next {
				return fmt.Errorf("old group %d, already moved, holds a member", gi)
			}
			j := firstSlot(m)
			full++
			if err := member(g, j, oldSlot|gi*8+j); err != nil {
				return err
			}
		}
	}
	if full != x.count {
		return fmt.Errorf("index holds %d members, counts %d", full, x.count)
	}
	for _, l := range leaves {
		ks, ss := make([]M, l.n()), make([]S, l.n())
		for i := range ks {
			ks[i], ss[i] = l.key(i), l.score(i)
		}
		for i := range ks {
			var p probe[M]
			c.stored(ks[i], &p)
			slot, ok := c.findSlot(hashProbe(&p), &p)
			if !ok {
				return fmt.Errorf("member %q is in the tree but not the index", c.text(nil, ks[i]))
			}
			if c.slotMember(slot) != ks[i] {
				return fmt.Errorf("member %q: the index and the tree refer to different records", c.text(nil, ks[i]))
			}
			if s := c.slotScore(slot); math.Float64bits(float64(s)) != math.Float64bits(float64(ss[i])) {
				return fmt.Errorf("member %q scores %v in the tree, %v in the index", c.text(nil, ks[i]), ss[i], s)
			}
		}
	}
	return nil
}
