package packed

// The counted B+tree: descent, rank and select, insertion with sibling
// shifts and splits, removal with merges and redistribution.

// pathInline is how many levels a path holds without allocating. Every
// mutation declares paths, and Go zeroes them, so they are kept short: non-root
// branches keep at least a quarter of their 64 children, so ten levels
// hold more than 10^11 entries. Only the small branches of tests (as few as
// two children) make deeper trees, whose paths allocate the rest.
const pathInline = 10

// initialLeafCap is the capacity a set's first leaf starts with; a root
// leaf doubles up to the tree's leaf capacity, so small sets stay small.
const initialLeafCap = 8

// A leaf below minLeafNum/minLeafDen of its capacity after a removal is
// merged or refilled (see fixLeaf and doc.go).
const minLeafNum, minLeafDen = 2, 3

type step[M member, S score] struct {
	b *branch[M, S]
	i int
}

// path records a descent: the branch and child index at each level.
type path[M member, S score] struct {
	s     [pathInline]step[M, S]
	more  []step[M, S] // levels from pathInline on, in trees that deep
	depth int
}

// at returns level d of the path.
func (pa *path[M, S]) at(d int) *step[M, S] {
	if d < pathInline {
		return &pa.s[d]
	}
	return &pa.more[d-pathInline]
}

// start readies the path for a descent of depth levels.
func (pa *path[M, S]) start(depth int) {
	pa.depth = depth
	if depth > pathInline && len(pa.more) < depth-pathInline {
		pa.more = make([]step[M, S], depth-pathInline)
	}
}

func (c *zcore[M, S, V]) minLeaf() int   { return max(1, c.leafCap*minLeafNum/minLeafDen) }
func (c *zcore[M, S, V]) minBranch() int { return max(2, c.branchCap/4) }

// smallCap is the capacity of a standard leaf made to hold fewer than
// three quarters of a full leaf's entries (by a split, or removals); it
// grows to leafCap when it fills. Leaves that hold between two thirds and
// three quarters of a full leaf thus take a quarter less memory. (384 and
// 512 entries are both exact allocation size classes for every array of a
// leaf.) Packed layouts, well within their memory target, keep full-size
// leaves: the copies cost their tied increments 9%.
func (c *zcore[M, S, V]) smallCap() int {
	if kindOf[M]() != MemberBytes {
		return c.leafCap
	}
	return max(1, c.leafCap-c.leafCap/4)
}

// capFor returns the capacity for a new leaf of n entries.
func (c *zcore[M, S, V]) capFor(n int) int {
	if n < c.smallCap() {
		return c.smallCap()
	}
	return c.leafCap
}

// room makes room in leaf l for k more entries.
func (c *zcore[M, S, V]) room(l *leaf[M, S], k int) {
	if l.free() < k {
		l.grow(c.leafCap)
	}
}

// trim shrinks a leaf that a split left holding few entries.
func (c *zcore[M, S, V]) trim(l *leaf[M, S]) {
	if n := c.capFor(l.n() + 1); n < l.capacity() {
		l.grow(n)
	}
}

// keyLess reports whether key (s, p) orders before (fs, fm).
func (c *zcore[M, S, V]) keyLess(s S, p *probe[M], fs S, fm *M) bool {
	return s < fs || s == fs && c.cmpMember(p, fm) < 0
}

// descend returns the leaf whose range holds key (s, p), recording the path.
func (c *zcore[M, S, V]) descend(s S, p *probe[M], pa *path[M, S]) *leaf[M, S] {
	pa.start(c.height)
	if c.height == 0 {
		return c.rootLeaf
	}
	// In order-key trees the child whose range holds the key is found as
	// the first fence above it, the first at or above its key plus one: no
	// key is the largest uint64 (its score bits would be a NaN).
	var above uint64
	if okeyLeaves[M, S]() {
		above = okeyOf(s, p.m) + 1
	}
	x := prefixOf(p) // (standard members; once, not at every level)
	b := c.root
	for d := 0; ; d++ {
		// The child whose range holds the key: the last whose fence is
		// <= the key. (Written out: generic methods called from generic
		// code are not inlined, and each level of call costs.)
		var i int
		if okeyLeaves[M, S]() {
			i = lowerBound(b.sepK[1:b.n], above)
		} else if kindOf[M]() == MemberBytes {
			i = c.bytesBound(b.sepM[1:b.n], b.sepS[1:b.n], b.sepP[1:b.n], s, p, x, true)
		} else {
			i = c.keyBound(b.sepM[1:b.n], b.sepS[1:b.n], s, p, true)
		}
		*pa.at(d) = step[M, S]{b, i}
		if d == c.height-1 {
			return b.leaves[i]
		}
		b = b.kids[i]
	}
}

// first returns the first leaf, filling pa with the path to it. Removals
// in score order (queues and sliding windows: ZREM of the oldest entry)
// take the first entry, so remove checks it before searching: following
// the first child down costs a load per level, where a descent searches
// every level.
func (c *zcore[M, S, V]) first(pa *path[M, S]) *leaf[M, S] {
	pa.start(c.height)
	if c.height == 0 {
		return c.rootLeaf
	}
	b := c.root
	for d := 0; ; d++ {
		*pa.at(d) = step[M, S]{b, 0}
		if d == c.height-1 {
			return b.leaves[0]
		}
		b = b.kids[0]
	}
}

// leafSearch returns the position of the first entry of l not before key
// (s, p), and whether that entry is the key.
func (c *zcore[M, S, V]) leafSearch(l *leaf[M, S], s S, p *probe[M]) (int, bool) {
	if okeyLeaves[M, S]() {
		es, k := l.entries(), okeyOf(s, p.m)
		i := lowerBound(es, k)
		return i, i < len(es) && es[i] == k
	}
	ks, ss := l.live()
	var i int
	if kindOf[M]() == MemberBytes {
		i = c.bytesBound(ks, ss, l.prefixes(), s, p, memberPrefix(p.b), false)
	} else {
		i = c.keyBound(ks, ss, s, p, false)
	}
	return i, i < len(ss) && ss[i] == s && c.eqMember(p, &ks[i])
}

// adjust adds delta to the counts along a path.
func (pa *path[M, S]) adjust(delta int) {
	for d := range pa.depth {
		st := pa.at(d)
		st.b.counts[st.i] += delta
	}
}

// before returns the number of entries in the subtrees left of the path.
func (pa *path[M, S]) before() int {
	r := 0
	for d := range pa.depth {
		st := pa.at(d)
		for _, n := range st.b.counts[:st.i] {
			r += n
		}
	}
	return r
}

// selectPath returns the leaf and position of the entry of rank r.
func (c *zcore[M, S, V]) selectPath(r int, pa *path[M, S]) (*leaf[M, S], int) {
	pa.start(c.height)
	if c.height == 0 {
		return c.rootLeaf, r
	}
	b := c.root
	for d := 0; ; d++ {
		i := 0
		for r >= b.counts[i] {
			r -= b.counts[i]
			i++
		}
		*pa.at(d) = step[M, S]{b, i}
		if d == c.height-1 {
			return b.leaves[i], r
		}
		b = b.kids[i]
	}
}

// prefix returns how many entries satisfy in, a predicate that holds for a
// prefix of the order (such as "score < x").
func (c *zcore[M, S, V]) prefix(in func(s S, m *M) bool) int {
	if c.n == 0 {
		return 0
	}
	r, l := 0, c.rootLeaf
	if c.height > 0 {
		b := c.root
		for d := 0; ; d++ {
			lo, hi := 1, b.n
			for lo < hi {
				h := int(uint(lo+hi) >> 1)
				if in(b.sepS[h], &b.sepM[h]) {
					lo = h + 1
				} else {
					hi = h
				}
			}
			for _, n := range b.counts[:lo-1] {
				r += n
			}
			if d == c.height-1 {
				l = b.leaves[lo-1]
				break
			}
			b = b.kids[lo-1]
		}
	}
	if okeyLeaves[M, S]() {
		lo, hi := 0, l.n()
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if m := l.key(h); in(l.score(h), &m) {
				lo = h + 1
			} else {
				hi = h
			}
		}
		return r + lo
	}
	ks, ss := l.live()
	lo, hi := 0, len(ss)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if in(ss[h], &ks[h]) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return r + lo
}

// insert adds key (s, p), stored as member m; it must not be in the tree.
func (c *zcore[M, S, V]) insert(s S, p *probe[M], m M) {
	if c.rootLeaf == nil && c.height == 0 {
		c.rootLeaf = newLeaf[M, S](min(initialLeafCap, c.leafCap))
	}
	var pa path[M, S]
	l := c.descend(s, p, &pa)
	i, _ := c.leafSearch(l, s, p)
	px := prefixOf(p)
	pa.adjust(1)
	c.n++
	if l.free() == 0 {
		switch {
		case l.capacity() < c.leafCap:
			l.grow(min(2*l.capacity(), c.leafCap))
		case pa.depth > 0 && c.shiftInsert(l, &pa, i, m, s, px):
			return
		case pa.depth > 0 && !(i == l.n() && l.next == nil) && !(i == 0 && l.prev == nil):
			c.splitThree(&pa, s, p, m)
			return
		default:
			c.splitLeaf(l, &pa, i, m, s, px)
			return
		}
	}
	l.insertAt(i, m, s, px)
}

// shiftInsert inserts into the full leaf l by first moving half of a
// sibling's free space worth of entries into that sibling. This keeps
// leaves nearly full under random insertion, which is most of the memory
// per member; see doc.go.
func (c *zcore[M, S, V]) shiftInsert(l *leaf[M, S], pa *path[M, S], i int, m M, s S, px mprefix) bool {
	b, ci := pa.at(pa.depth-1).b, pa.at(pa.depth-1).i
	minShift, n := max(2, c.leafCap/16), l.n()
	if ci > 0 {
		if left := b.leaves[ci-1]; c.leafCap-left.n() >= minShift {
			k := (c.leafCap - left.n()) / 2
			c.room(left, k+1) // (the new entry may go there too)
			left.appendFrom(l, 0, k)
			l.removeRange(0, k)
			b.counts[ci-1] += k
			b.counts[ci] -= k
			if i <= k {
				left.insertAt(left.n()-k+i, m, s, px)
				b.counts[ci-1]++
				b.counts[ci]--
			} else {
				l.insertAt(i-k, m, s, px)
			}
			c.setFence(b, ci, l.score(0), l.key(0))
			return true
		}
	}
	if ci+1 < b.n {
		if right := b.leaves[ci+1]; c.leafCap-right.n() >= minShift {
			k := (c.leafCap - right.n()) / 2
			c.room(right, k+1)
			right.prependFrom(l, n-k, n)
			l.removeRange(n-k, n)
			b.counts[ci+1] += k
			b.counts[ci] -= k
			if i > n-k {
				right.insertAt(i-(n-k), m, s, px)
				b.counts[ci+1]++
				b.counts[ci]--
			} else {
				l.insertAt(i, m, s, px)
			}
			c.setFence(b, ci+1, right.score(0), right.key(0))
			return true
		}
	}
	return false
}

// splitThree inserts into the full leaf at the end of pa, whose siblings
// are full too, by spreading it and a sibling over three leaves, each about
// two thirds full (a B*-tree split; a split in two leaves two half-full
// leaves, and leaf fill is most of the memory per member).
func (c *zcore[M, S, V]) splitThree(pa *path[M, S], s S, p *probe[M], m M) {
	b, li := pa.at(pa.depth-1).b, pa.at(pa.depth-1).i
	if li+1 == b.n {
		li--
	}
	a, z := b.leaves[li], b.leaves[li+1]
	third := (a.n() + z.n() + 3) / 3 // ceil((entries+1)/3): the new entry fits anywhere
	x := newLeaf[M, S](c.capFor(third + 1))
	x.appendFrom(a, third, a.n())
	a.removeRange(third, a.n())
	k := z.n() - (a.n() + x.n() + z.n() - 2*third)
	x.appendFrom(z, 0, k)
	z.removeRange(0, k)
	c.trim(a)
	c.trim(z)
	x.prev, x.next, a.next, z.prev = a, z, x, x
	t := z
	if xm := x.key(0); c.keyLess(s, p, x.score(0), &xm) {
		t = a
	} else if zm := z.key(0); c.keyLess(s, p, z.score(0), &zm) {
		t = x
	}
	j, _ := c.leafSearch(t, s, p)
	c.room(t, 1)
	t.insertAt(j, m, s, prefixOf(p))
	b.insertChild(li + 1)
	b.leaves[li+1], b.kids[li+1] = x, nil
	b.counts[li], b.counts[li+1], b.counts[li+2] = a.n(), x.n(), z.n()
	c.setFence(b, li+1, x.score(0), x.key(0))
	c.setFence(b, li+2, z.score(0), z.key(0))
	if b.n > c.branchCap {
		c.splitBranch(pa, pa.depth-1)
	}
}

// splitLeaf inserts into the full leaf l by splitting it. Appending past
// the last leaf (or prepending before the first) splits at the insertion
// point, so ascending and descending loads fill leaves completely.
func (c *zcore[M, S, V]) splitLeaf(l *leaf[M, S], pa *path[M, S], i int, m M, s S, px mprefix) {
	n := l.n()
	mid := n / 2
	if i == n && l.next == nil {
		mid = n
	} else if i == 0 && l.prev == nil {
		mid = 0
	}
	r := newLeaf[M, S](c.capFor(n - mid + 1))
	r.appendFrom(l, mid, n)
	l.removeRange(mid, n)
	c.trim(l)
	r.prev, r.next = l, l.next
	if l.next != nil {
		l.next.prev = r
	}
	l.next = r
	if i < mid || i == mid && mid < n {
		l.insertAt(i, m, s, px)
	} else {
		r.insertAt(i-mid, m, s, px)
	}
	c.addSibling(pa, pa.depth, l.n(), r.score(0), r.key(0), r.n(), r, nil)
}

// addSibling links a new right sibling (leaf rl or branch rb) next to the
// node at depth d of the path, whose parent is at depth d-1.
func (c *zcore[M, S, V]) addSibling(pa *path[M, S], d, leftN int, fs S, fm M, rightN int, rl *leaf[M, S], rb *branch[M, S]) {
	if d == 0 {
		nb := &branch[M, S]{n: 2}
		nb.counts[0], nb.counts[1] = leftN, rightN
		c.setFence(nb, 1, fs, fm)
		if rl != nil {
			nb.leaves[0], nb.leaves[1] = c.rootLeaf, rl
			c.rootLeaf = nil
		} else {
			nb.kids[0], nb.kids[1] = c.root, rb
		}
		c.root = nb
		c.height++
		return
	}
	b, i := pa.at(d-1).b, pa.at(d-1).i
	b.insertChild(i + 1)
	b.counts[i], b.counts[i+1] = leftN, rightN
	c.setFence(b, i+1, fs, fm)
	b.leaves[i+1], b.kids[i+1] = rl, rb
	if b.n > c.branchCap {
		c.splitBranch(pa, d-1)
	}
}

// splitBranch splits the branch at depth d of the path in two.
func (c *zcore[M, S, V]) splitBranch(pa *path[M, S], d int) {
	b := pa.at(d).b
	mid := b.n / 2
	nb := &branch[M, S]{n: b.n - mid}
	copyKids(nb, 0, b, mid, b.n-mid)
	b.truncate(mid)
	c.addSibling(pa, d, b.sum(), nb.sepS[0], nb.sepM[0], nb.sum(), nil, nb)
}

// removeAt removes entry i of leaf l, found along path pa.
func (c *zcore[M, S, V]) removeAt(l *leaf[M, S], pa *path[M, S], i int) {
	pa.adjust(-1)
	c.n--
	l.removeRange(i, i+1)
	c.fixLeaf(l, pa)
}

// fixLeaf restores the fill of leaf l after removals: an underfull leaf is
// merged with a sibling when both fit in one leaf, and otherwise takes
// entries from it so that both are half full.
func (c *zcore[M, S, V]) fixLeaf(l *leaf[M, S], pa *path[M, S]) {
	d := pa.depth
	if d == 0 {
		switch n := l.n(); {
		case n == 0:
			c.rootLeaf = nil
		case l.capacity() > initialLeafCap && n < l.capacity()/4:
			l.grow(max(initialLeafCap, l.capacity()/2))
		}
		return
	}
	if l.n() >= c.minLeaf() {
		// A full-size leaf that has lost a quarter of its entries moves
		// to the smaller arrays (a sixteenth short of them, so that a few
		// insertions do not grow it straight back). The first and last
		// leaves keep theirs: that is where queues take entries (ZPOPMIN,
		// removals in order) until the leaf is refilled from its sibling,
		// which would only grow it back.
		if small := c.smallCap(); small < c.leafCap && l.capacity() == c.leafCap && l.n() < small-c.leafCap/16 && l.prev != nil && l.next != nil {
			l.grow(small)
		}
		return
	}
	b, li := pa.at(d-1).b, pa.at(d-1).i
	if li > 0 && li+1 < b.n && c.spread(b, li) {
		c.fixBranch(pa, d-1)
		return
	}
	if li > 0 {
		li--
	}
	a, z := b.leaves[li], b.leaves[li+1]
	if a.n()+z.n() > c.leafCap {
		if (a.n()+z.n())/2 < c.minLeaf() && 2*l.n() >= c.leafCap {
			// Evening the two out would not bring l back to minLeaf, and l
			// is still half full: leave both until l is under half full or
			// fits into its sibling. (Evened out at every removal, they
			// moved one entry or none each time: a third of the removals
			// in order did.)
			return
		}
		want := (a.n() + z.n()) / 2
		if k := want - a.n(); k > 0 {
			c.room(a, k)
			a.appendFrom(z, 0, k)
			z.removeRange(0, k)
		} else if k < 0 {
			n := a.n()
			c.room(z, -k)
			z.prependFrom(a, n+k, n)
			a.removeRange(n+k, n)
		}
		b.counts[li], b.counts[li+1] = a.n(), z.n()
		c.setFence(b, li+1, z.score(0), z.key(0))
		return
	}
	if a.n() >= z.n() {
		c.room(a, z.n())
		a.appendFrom(z, 0, z.n())
		c.unlink(z)
	} else {
		c.room(z, a.n())
		z.prependFrom(a, 0, a.n())
		c.unlink(a)
		b.leaves[li] = z
	}
	b.counts[li] += b.counts[li+1]
	b.removeChild(li + 1)
	c.fixBranch(pa, d-1)
}

// spread empties the underfull leaf li into both its siblings when the
// three fit in two leaves: merging three leaves into two, rather than two
// into one, is what keeps leaves about 3/4 full under deletions (doc.go).
func (c *zcore[M, S, V]) spread(b *branch[M, S], li int) bool {
	a, l, z := b.leaves[li-1], b.leaves[li], b.leaves[li+1]
	total := a.n() + l.n() + z.n()
	if total > 2*c.leafCap-c.leafCap/8 {
		return false
	}
	k := min(max(total/2-a.n(), 0), l.n())
	c.room(a, k)
	c.room(z, l.n()-k)
	a.appendFrom(l, 0, k)
	z.prependFrom(l, k, l.n())
	b.counts[li-1] += k
	b.counts[li+1] += l.n() - k
	c.setFence(b, li+1, z.score(0), z.key(0))
	c.unlink(l)
	b.removeChild(li)
	return true
}

func (c *zcore[M, S, V]) unlink(l *leaf[M, S]) {
	if l.prev != nil {
		l.prev.next = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	}
	l.prev, l.next = nil, nil
}

// fixBranch restores the branch at depth d after it lost a child, merging
// or redistributing with a sibling as fixLeaf does, and collapses a root
// with a single child.
func (c *zcore[M, S, V]) fixBranch(pa *path[M, S], d int) {
	b := pa.at(d).b
	if d == 0 {
		if b.n == 1 {
			c.height--
			if c.height == 0 {
				c.rootLeaf, c.root = b.leaves[0], nil
			} else {
				c.root = b.kids[0]
			}
		}
		return
	}
	if b.n >= c.minBranch() {
		return
	}
	g, li := pa.at(d-1).b, pa.at(d-1).i
	if li > 0 {
		li--
	}
	a, z := g.kids[li], g.kids[li+1]
	if a.n+z.n > c.branchCap {
		if k := (a.n+z.n)/2 - a.n; k > 0 {
			copyKids(a, a.n, z, 0, k)
			c.setFence(a, a.n, g.sepS[li+1], g.sepM[li+1])
			a.n += k
			c.setFence(g, li+1, z.sepS[k], z.sepM[k])
			copyKids(z, 0, z, k, z.n-k)
			z.truncate(z.n - k)
		} else if k < 0 {
			k = -k
			copyKids(z, k, z, 0, z.n)
			c.setFence(z, k, g.sepS[li+1], g.sepM[li+1])
			copyKids(z, 0, a, a.n-k, k)
			z.n += k
			a.truncate(a.n - k)
			c.setFence(g, li+1, z.sepS[0], z.sepM[0])
		}
		g.counts[li], g.counts[li+1] = a.sum(), z.sum()
		return
	}
	k := z.n
	copyKids(a, a.n, z, 0, k)
	c.setFence(a, a.n, g.sepS[li+1], g.sepM[li+1])
	a.n += k
	g.counts[li] += g.counts[li+1]
	g.removeChild(li + 1)
	c.fixBranch(pa, d-1)
}

// rescore moves the entry for member p, stored as m, from score old to
// score s. It descends to the old key and to the new one together and
// searches both leaves together (pairBound2 and its kin), so the two
// searches cost about one. When both keys fall in the same leaf the entry
// moves within it, and only the entries between the two positions shift;
// otherwise it is removed from the old leaf and put at its found position
// in the new one, and then the old leaf's fill is restored as after any
// removal; only when the new leaf is full does the tree's ordinary
// insertion (with its shifts and splits) take over.
func (c *zcore[M, S, V]) rescore(old, s S, p *probe[M], m M) {
	if c.height == 0 {
		// One leaf: no descent, and no paths to declare (and zero).
		l := c.rootLeaf
		i, j := c.searchPair(l, l, old, s, p, m)
		if j > i {
			j--
		}
		l.move(i, j, s)
		return
	}
	var pa, pb path[M, S]
	la, lb := c.descend2(old, s, p, &pa, &pb)
	i, j := c.searchPair(la, lb, old, s, p, m)
	if la == lb {
		// The new key is within this leaf's fences (the descent chose it).
		if j > i {
			j--
		}
		la.move(i, j, s)
		return
	}
	pa.adjust(-1)
	c.n--
	la.removeRange(i, i+1)
	if lb.free() > 0 {
		// Insert first, then restore the old leaf's fill: the insertion
		// changes no branch, so pa still describes the tree for fixLeaf
		// (whose merge may take in lb itself).
		pb.adjust(1)
		c.n++
		lb.insertAt(j, m, s, prefixOf(p))
		c.fixLeaf(la, &pa)
		return
	}
	c.fixLeaf(la, &pa)
	c.insert(s, p, m)
}

// searchPair finds the entry of member p (stored as m) at score old in leaf
// la, and the position of its new key at score s in leaf lb, with one
// paired search of both leaves.
func (c *zcore[M, S, V]) searchPair(la, lb *leaf[M, S], old, s S, p *probe[M], m M) (i, j int) {
	if okeyLeaves[M, S]() {
		ea, k := la.entries(), okeyOf(old, p.m)
		i, j = okeyBound2(ea, k, lb.entries(), okeyOf(s, p.m))
		if i >= len(ea) || ea[i] != k {
			panic("packed: index and tree disagree")
		}
	} else if kindOf[M]() == MemberBytes {
		ka, sa := la.live()
		kb, sb := lb.live()
		pfa, pfb, x := la.prefixes(), lb.prefixes(), memberPrefix(p.b)
		i0, j0 := pairBound2(pfa, sa, old, x, pfb, sb, s, x, false)
		i = c.refFind(ka, sa, i0, old, p, m)
		j = c.tieFix(kb, sb, pfb, s, p, x, j0, false)
	} else {
		ka, sa := la.live()
		kb, sb := lb.live()
		i, j = c.keyBound2(ka, sa, old, kb, sb, s, p, false)
		if i >= len(sa) || sa[i] != old || !c.eqMember(p, &ka[i]) {
			panic("packed: index and tree disagree")
		}
	}
	return i, j
}

// descend2 is descend for two keys of member p at once, in lockstep.
func (c *zcore[M, S, V]) descend2(s1, s2 S, p *probe[M], pa, pb *path[M, S]) (*leaf[M, S], *leaf[M, S]) {
	pa.start(c.height)
	pb.start(c.height)
	if c.height == 0 {
		return c.rootLeaf, c.rootLeaf
	}
	var above1, above2 uint64 // as in descend
	if okeyLeaves[M, S]() {
		above1, above2 = okeyOf(s1, p.m)+1, okeyOf(s2, p.m)+1
	}
	x := prefixOf(p)
	a, b := c.root, c.root
	for d := 0; ; d++ {
		var i, j int
		if okeyLeaves[M, S]() {
			i, j = okeyBound2(a.sepK[1:a.n], above1, b.sepK[1:b.n], above2)
		} else if kindOf[M]() == MemberBytes {
			ka, kb, sa, sb, pfa, pfb := a.sepM[1:a.n], b.sepM[1:b.n], a.sepS[1:a.n], b.sepS[1:b.n], a.sepP[1:a.n], b.sepP[1:b.n]
			i, j = pairBound2(pfa, sa, s1, x, pfb, sb, s2, x, false)
			i, j = c.tieFix(ka, sa, pfa, s1, p, x, i, true), c.tieFix(kb, sb, pfb, s2, p, x, j, true)
		} else {
			i, j = c.keyBound2(a.sepM[1:a.n], a.sepS[1:a.n], s1, b.sepM[1:b.n], b.sepS[1:b.n], s2, p, true)
		}
		*pa.at(d), *pb.at(d) = step[M, S]{a, i}, step[M, S]{b, j}
		if d == c.height-1 {
			return a.leaves[i], b.leaves[j]
		}
		a, b = a.kids[i], b.kids[j]
	}
}

// walk calls bf for every branch and lf for every leaf (each if not nil).
func (c *zcore[M, S, V]) walk(bf func(*branch[M, S]), lf func(*leaf[M, S])) {
	if c.height == 0 {
		if c.rootLeaf != nil && lf != nil {
			lf(c.rootLeaf)
		}
		return
	}
	var rec func(b *branch[M, S], d int)
	rec = func(b *branch[M, S], d int) {
		if bf != nil {
			bf(b)
		}
		if d == c.height-1 {
			if lf != nil {
				for _, l := range b.leaves[:b.n] {
					lf(l)
				}
			}
			return
		}
		for _, k := range b.kids[:b.n] {
			rec(k, d+1)
		}
	}
	rec(c.root, 0)
}
