package packed

// maxFanout bounds a branch's children; a tree may use fewer (tests use
// small fanouts to grow deep trees from few members).
const maxFanout = 64

// branch is an interior node of the counted B+tree. Child i holds counts[i]
// entries, and every key in child i is >= its lower fence (sepS[i],
// sepM[i]) and < the fence of child i+1. The fence of child 0 is the
// branch's own lower fence, held by its parent, so sepS[0] and sepM[0] are
// unused. Fences are split points: a fence need not be a key still in the
// set. Children are leaves when the branch is on the lowest branch level,
// and branches otherwise. Arrays have one spare slot so that a branch can
// overflow by one child before it splits. In INT32/FLOAT32 trees sepK holds
// each fence's order key too (okey.go), which descents search.
type branch[M member, S score] struct {
	n      int
	counts [maxFanout + 1]int
	sepS   [maxFanout + 1]S
	sepM   [maxFanout + 1]M
	sepK   [maxFanout + 1]uint64
	sepP   [maxFanout + 1]mprefix // standard fences' member prefixes (memberPrefix)
	leaves [maxFanout + 1]*leaf[M, S]
	kids   [maxFanout + 1]*branch[M, S]
}

// sum returns the number of entries under b.
func (b *branch[M, S]) sum() int {
	t := 0
	for _, c := range b.counts[:b.n] {
		t += c
	}
	return t
}

// copyKids copies k children from src[si:] to dst[di:] (memmove semantics,
// so src and dst may be the same branch).
func copyKids[M member, S score](dst *branch[M, S], di int, src *branch[M, S], si, k int) {
	copy(dst.counts[di:di+k], src.counts[si:si+k])
	copy(dst.sepS[di:di+k], src.sepS[si:si+k])
	copy(dst.sepM[di:di+k], src.sepM[si:si+k])
	if okeyLeaves[M, S]() {
		copy(dst.sepK[di:di+k], src.sepK[si:si+k])
	}
	if kindOf[M]() == MemberBytes {
		copy(dst.sepP[di:di+k], src.sepP[si:si+k])
	}
	copy(dst.leaves[di:di+k], src.leaves[si:si+k])
	copy(dst.kids[di:di+k], src.kids[si:si+k])
}

// truncate drops children from index n on, clearing their pointers so the
// garbage collector can free them.
func (b *branch[M, S]) truncate(n int) {
	clear(b.leaves[n:b.n])
	clear(b.kids[n:b.n])
	b.n = n
}

// insertChild makes room for a child at index i.
func (b *branch[M, S]) insertChild(i int) {
	copyKids(b, i+1, b, i, b.n-i)
	b.n++
}

// removeChild removes child i.
func (b *branch[M, S]) removeChild(i int) {
	copyKids(b, i, b, i+1, b.n-i-1)
	b.truncate(b.n - 1)
}

// setFence sets the lower fence of child i of b.
func (c *zcore[M, S, V]) setFence(b *branch[M, S], i int, s S, m M) {
	b.sepS[i], b.sepM[i] = s, m
	if okeyLeaves[M, S]() {
		b.sepK[i] = okeyOf(s, m)
	}
	if kindOf[M]() == MemberBytes {
		b.sepP[i] = memberPrefix(c.ar.get(*asRef(&m)))
	}
}
