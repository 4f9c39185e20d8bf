package packed

// Reclaiming a standard set's arena garbage.
//
// A removed member's record stays in its chunk as garbage (arena.release)
// until the bytes still referred to around it are copied elsewhere. Two
// ways, by the arena's size:
//
//   - While the live records take at most compactLimit bytes, compact
//     copies them all into a fresh arena in one pass over the tree: the
//     cheapest way per byte, and a pause of half a millisecond at most
//     (0.49 ms for 27,595 members of 10 bytes, 0.13 ms for 4,810 of 100).
//   - Above that, a pass over everything would pause one command for as
//     long as the set is large (100 to 365 ms at 4,000,000 members), so
//     evacuate empties one chunk per removal instead: the chunk with the
//     most garbage, whose live records are copied to the arena's tail and
//     whose number is then reused. Its references are found without a
//     pass over the set: a record's member is live when the index slot
//     found by hashing its bytes refers to this very record (a record left
//     by a removed member may share its bytes with a newer one), and its
//     leaf entry is found by a descent to the record's score and member.
//     The fences, one per leaf, are read in the branches: a fence may
//     still refer to a record its member has left, and is pointed at a
//     live member's record instead.
//
// Both start when garbage is more than half of the arena's records, after
// a removal, so the arena holds about twice the live bytes at most (but
// for the tail's garbage, which is not evacuated); greedy choice of the
// chunk means that a chunk is copied when most of it is garbage. A range
// removal evacuates up to one chunk per 4,096 members it removed.

// compactLimit is the most live record bytes that compact copies in one
// go; larger arenas are evacuated a chunk at a time. (A variable so that
// tests can make small sets take either way.)
var compactLimit = 512 << 10

// reclaimHook, when set (by tests), is told of each compaction (true) and
// each chunk evacuated (false).
var reclaimHook func(full bool)

// wasteful reports whether the arena's garbage is over half its records
// (and more than a few kilobytes).
func (a *arena) wasteful() bool { return a.garbage > 4096 && 2*a.garbage > a.used }

// reclaim gives some of the arena's garbage back after the removal of
// removed members: all of it while the arena is small, one chunk's worth
// otherwise, or one per 4,096 members removed.
func (c *zcore[M, S, V]) reclaim(removed int) {
	if c.ar.used-c.ar.garbage <= compactLimit {
		c.compact()
		return
	}
	for range 1 + removed/4096 {
		k := c.ar.victim()
		if k < 0 {
			return
		}
		c.evacuate(k)
		if !c.ar.wasteful() {
			return
		}
	}
}

// victim returns the chunk with the most garbage among those, other than
// the tail, that are at least half garbage (so that evacuating one frees
// at least as many bytes as it copies), or -1 when there is none.
func (a *arena) victim() int {
	best, most := -1, uint32(0)
	for k := range a.chunks {
		if ch := &a.chunks[k]; ch.dead > most && 2*int(ch.dead) >= len(ch.b) && k != int(a.tail) {
			best, most = k, ch.dead
		}
	}
	return best
}

// evacuate copies chunk k's live members' records to the arena's tail,
// points every reference at the copies and frees the chunk: the index's
// slots and the leaves' entries at the copies, and fences at the least
// key to their right (refence).
func (c *zcore[M, S, V]) evacuate(k int) {
	if reclaimHook != nil {
		reclaimHook(false)
	}
	buf := c.ar.chunks[k].b
	if int(c.ar.chunks[k].dead) < len(buf) {
		for off := 0; off < len(buf); {
			r := srefAt(k<<chunkShift | off)
			rec := c.ar.record(r)
			off += len(rec)
			var p probe[M]
			m := refMember[M](r)
			c.stored(m, &p)
			slot, found := c.findSlot(hashProbe(&p), &p)
			if !found || c.slotMember(slot) != m {
				continue // garbage
			}
			s := S(c.ar.score(r))
			var pa path[M, S]
			l := c.descend(s, &p, &pa)
			i := c.leafFind(l, s, &p, m)
			to, ok := c.ar.addRecord(rec)
			if !ok {
				// The offsets ran out (4 GiB) before the chunk was empty:
				// what moved refers to its copies, the rest to the chunk
				// still, and a compaction copies them all.
				c.compact()
				return
			}
			l.own()
			l.keys[int(l.lo)+i] = refMember[M](to)
			if c.indexed() {
				*c.idx.key(slot) = refMember[M](to)
			}
		}
	}
	c.refence(k)
	c.ar.drop(k)
}

// refence points the fences that refer to a record in chunk k (every
// fence, when k is -1) at the least key of the subtree to their right, a
// live member's: a fence need only order after every key to its left and
// not after any to its right, and that key does. So fences never keep a
// record alive of their own.
func (c *zcore[M, S, V]) refence(k int) {
	c.walk(func(b *branch[M, S]) {
		for i := 1; i < b.n; i++ {
			if k >= 0 && asRef(&b.sepM[i]).chunk() != k {
				continue
			}
			kb, ki := b, i
			for kb.kids[ki] != nil { // down the first children to a leaf
				kb, ki = kb.kids[ki], 0
			}
			l := kb.leaves[ki]
			x := int(l.lo)
			b.sepS[i], b.sepM[i], b.sepP[i] = l.scores[x], l.keys[x], l.pfx[x]
		}
	}, nil)
}

// compact copies the records of the set's members into a fresh arena,
// dropping garbage, and points the fences at members' records (refence).
// The index's slots, which hold the old offsets, are updated in place
// rather than rebuilt: each member's old record is overwritten with its
// new offset (the old arena is dropped afterwards), and a slot reads its
// member's new offset there, with no hashing and no probing.
func (c *zcore[M, S, V]) compact() {
	if kindOf[M]() != MemberBytes {
		return
	}
	if c.n == 0 {
		c.ar, c.idx = arena{}, swiss[M, V]{}
		return
	}
	if reclaimHook != nil {
		reclaimHook(true)
	}
	old := c.ar
	c.ar = arena{expect: old.used - old.garbage}
	c.walk(nil, func(l *leaf[M, S]) {
		l.own()
		for i := l.lo; i < l.hi; i++ {
			rec := old.record(*asRef(&l.keys[i]))
			r, _ := c.ar.addRecord(rec)
			copy(rec, r[:]) // the forwarding offset, for the index
			l.keys[i] = refMember[M](r)
		}
	})
	c.ar.expect = 0
	for _, t := range [][]group[M, V]{c.idx.groups, c.idx.oldGroups()} {
		for gi := range t {
			g := &t[gi]
			for m := matchFull(g.ctrl); m != 0; m &= m - 1 {
				k := asRef(&g.keys[firstSlot(m)])
				copy(k[:], old.at(*k)[:len(k)])
			}
		}
	}
	c.refence(-1)
}
