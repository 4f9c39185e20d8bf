package packed

import "slices"

// leaf is a B+tree leaf: a sorted run of (score, member) entries.
//
// Entries live in pointer-free arrays. INT32/FLOAT32 leaves keep one array
// of order keys (ents; see okey.go). The other layouts keep members and
// scores in two arrays (separate, so that no entry carries padding and a
// binary search on scores touches only score cache lines), and standard
// leaves a third, each member's first two bytes (pfx; see memberPrefix),
// so that their searches read member bytes only where scores and prefixes
// tie. Arrays a layout does not use are nil.
//
// The live entries are [lo, hi): the run floats inside its arrays so that
// an insertion or removal shifts whichever side of the position is
// shorter. A removal at the front (ZPOPMIN, sequential deletion) moves
// nothing at all, and an average random update moves a quarter of the
// leaf rather than half.
type leaf[M member, S score] struct {
	keys       []M // len(keys) is the leaf's capacity (split arrays)
	scores     []S
	ents       []uint64  // order keys; len(ents) is the capacity
	pfx        []mprefix // standard members: their first two bytes (memberPrefix)
	lo, hi     int32
	prev, next *leaf[M, S]
	// shared: a View (view.go) may refer to the arrays, so they are
	// copied before they are written (own). It fits in the header's
	// allocation size class: leaves take no more memory for it.
	shared bool
}

// own makes the arrays the leaf's own before a write: a copy, when a
// View may refer to them. Every write to the arrays goes through own or
// a method that does what it does first (written out there: the
// compiler does not inline one generic method into another).
func (l *leaf[M, S]) own() {
	if l.shared {
		l.unshare()
	}
}

// unshare gives the leaf copies of its arrays. (Not inlined: it is the
// rare path of hot methods.)
//
//go:noinline
func (l *leaf[M, S]) unshare() {
	l.keys, l.scores = slices.Clone(l.keys), slices.Clone(l.scores)
	l.ents, l.pfx = slices.Clone(l.ents), slices.Clone(l.pfx)
	l.shared = false
}

func newLeaf[M member, S score](capacity int) *leaf[M, S] {
	if okeyLeaves[M, S]() {
		return &leaf[M, S]{ents: make([]uint64, capacity)}
	}
	l := &leaf[M, S]{keys: make([]M, capacity), scores: make([]S, capacity)}
	if kindOf[M]() == MemberBytes {
		l.pfx = make([]mprefix, capacity)
	}
	return l
}

// prefixes returns the live entries' member prefixes (standard leaves).
func (l *leaf[M, S]) prefixes() []mprefix { return l.pfx[l.lo:l.hi] }

func (l *leaf[M, S]) n() int { return int(l.hi - l.lo) }

// capacity returns how many entries the leaf's arrays hold.
func (l *leaf[M, S]) capacity() int {
	if okeyLeaves[M, S]() {
		return len(l.ents)
	}
	return len(l.keys)
}

func (l *leaf[M, S]) free() int { return l.capacity() - l.n() }

// live returns the entries of a leaf with split arrays.
func (l *leaf[M, S]) live() ([]M, []S) {
	if okeyLeaves[M, S]() {
		panic("packed: live on an order-key leaf")
	}
	return l.keys[l.lo:l.hi], l.scores[l.lo:l.hi]
}

// entries returns the entries of an order-key leaf.
func (l *leaf[M, S]) entries() []uint64 { return l.ents[l.lo:l.hi] }

func (l *leaf[M, S]) key(i int) M {
	x := int(l.lo) + i
	if okeyLeaves[M, S]() {
		return okeyMember[M](l.ents[x])
	}
	return l.keys[x]
}

func (l *leaf[M, S]) score(i int) S {
	x := int(l.lo) + i
	if okeyLeaves[M, S]() {
		return okeyScore[S](l.ents[x])
	}
	return l.scores[x]
}

// shift copies the n entries at array index src to array index dst.
func (l *leaf[M, S]) shift(dst, src, n int) {
	if l.shared { // (own, written out: generic calls are not inlined)
		l.unshare()
	}
	if okeyLeaves[M, S]() {
		copy(l.ents[dst:dst+n], l.ents[src:src+n])
		return
	}
	copy(l.keys[dst:dst+n], l.keys[src:src+n])
	copy(l.scores[dst:dst+n], l.scores[src:src+n])
	if kindOf[M]() == MemberBytes {
		copy(l.pfx[dst:dst+n], l.pfx[src:src+n])
	}
}

// set writes an entry at array index x.
func (l *leaf[M, S]) set(x int, m M, s S, px mprefix) {
	if l.shared { // (own, written out: generic calls are not inlined)
		l.unshare()
	}
	if okeyLeaves[M, S]() {
		l.ents[x] = okeyOf(s, m)
		return
	}
	l.keys[x], l.scores[x] = m, s
	if kindOf[M]() == MemberBytes {
		l.pfx[x] = px
	}
}

// recenter moves the entries to start at index lo.
func (l *leaf[M, S]) recenter(lo int) {
	n := l.n()
	l.shift(lo, int(l.lo), n)
	l.lo, l.hi = int32(lo), int32(lo+n)
}

// grow reallocates the arrays with a larger capacity (small root leaves
// start small and grow up to the tree's leaf capacity).
func (l *leaf[M, S]) grow(capacity int) {
	n := l.n()
	if okeyLeaves[M, S]() {
		l.ents = append(make([]uint64, 0, capacity), l.entries()...)[:capacity]
	} else {
		ks, ss := l.live()
		l.keys = append(make([]M, 0, capacity), ks...)[:capacity]
		l.scores = append(make([]S, 0, capacity), ss...)[:capacity]
		if kindOf[M]() == MemberBytes {
			l.pfx = append(make([]mprefix, 0, capacity), l.prefixes()...)[:capacity]
		}
	}
	l.lo, l.hi = 0, int32(n)
	l.shared = false // (new arrays)
}

// insertAt inserts an entry at position i. The leaf must not be full.
func (l *leaf[M, S]) insertAt(i int, m M, s S, px mprefix) {
	if l.shared { // (own, written out: generic calls are not inlined)
		l.unshare()
	}
	n, lo := l.n(), int(l.lo)
	front := i < n-i
	if front && lo == 0 || !front && int(l.hi) == l.capacity() {
		// The cheap side is out of room: split the free space evenly.
		l.recenter((l.capacity() - n) / 2)
		lo = int(l.lo)
	}
	// (A copy of nothing still calls memmove: appending and prepending,
	// as loads in order do, skip it.)
	if front && lo > 0 || int(l.hi) == l.capacity() {
		if i > 0 {
			l.shift(lo-1, lo, i)
		}
		l.lo--
	} else {
		if i < n {
			l.shift(lo+i+1, lo+i, n-i)
		}
		l.hi++
	}
	// (set, written out: it is too large for the compiler to inline.)
	if x := int(l.lo) + i; okeyLeaves[M, S]() {
		l.ents[x] = okeyOf(s, m)
	} else {
		l.keys[x], l.scores[x] = m, s
		if kindOf[M]() == MemberBytes {
			l.pfx[x] = px
		}
	}
}

// removeRange removes entries [i, j), shifting the shorter side.
func (l *leaf[M, S]) removeRange(i, j int) {
	n, lo, k := l.n(), int(l.lo), j-i
	switch {
	case k == n:
		l.lo, l.hi = 0, 0
		return
	case i == 0: // at the front (ZPOPMIN, removals in order): nothing moves,
		// and a copy of nothing would still call memmove
		l.lo += int32(k)
		return
	case j == n:
		l.hi -= int32(k)
		return
	}
	if i < n-j {
		l.shift(lo+k, lo, i)
		l.lo += int32(k)
	} else {
		l.shift(lo+i, lo+j, n-j)
		l.hi -= int32(k)
	}
}

// move rescores entry i to s and moves it to position j, where j is its
// position counted without the entry itself. Only the entries between the
// two positions shift.
func (l *leaf[M, S]) move(i, j int, s S) {
	if l.shared { // (own, written out: generic calls are not inlined)
		l.unshare()
	}
	lo := int(l.lo)
	if okeyLeaves[M, S]() {
		e := okeyRescore(l.ents[lo+i], s)
		if j > i {
			copy(l.ents[lo+i:lo+j], l.ents[lo+i+1:lo+j+1])
		} else {
			copy(l.ents[lo+j+1:lo+i+1], l.ents[lo+j:lo+i])
		}
		l.ents[lo+j] = e
		return
	}
	m := l.keys[lo+i]
	if j > i {
		copy(l.keys[lo+i:lo+j], l.keys[lo+i+1:lo+j+1])
		copy(l.scores[lo+i:lo+j], l.scores[lo+i+1:lo+j+1])
	} else {
		copy(l.keys[lo+j+1:lo+i+1], l.keys[lo+j:lo+i])
		copy(l.scores[lo+j+1:lo+i+1], l.scores[lo+j:lo+i])
	}
	l.keys[lo+j], l.scores[lo+j] = m, s
	if kindOf[M]() == MemberBytes {
		px := l.pfx[lo+i]
		if j > i {
			copy(l.pfx[lo+i:lo+j], l.pfx[lo+i+1:lo+j+1])
		} else {
			copy(l.pfx[lo+j+1:lo+i+1], l.pfx[lo+j:lo+i])
		}
		l.pfx[lo+j] = px
	}
}

// copyFrom copies src's entries [i, j) into l's arrays at index x.
func (l *leaf[M, S]) copyFrom(x int, src *leaf[M, S], i, j int) {
	if l.shared { // (own, written out: generic calls are not inlined)
		l.unshare()
	}
	a, b := int(src.lo)+i, int(src.lo)+j
	if okeyLeaves[M, S]() {
		copy(l.ents[x:], src.ents[a:b])
		return
	}
	copy(l.keys[x:], src.keys[a:b])
	copy(l.scores[x:], src.scores[a:b])
	if kindOf[M]() == MemberBytes {
		copy(l.pfx[x:], src.pfx[a:b])
	}
}

// appendFrom appends src's entries [i, j) at the back; they must fit.
func (l *leaf[M, S]) appendFrom(src *leaf[M, S], i, j int) {
	if int(l.hi)+j-i > l.capacity() {
		l.recenter(0)
	}
	l.copyFrom(int(l.hi), src, i, j)
	l.hi += int32(j - i)
}

// prependFrom inserts src's entries [i, j) at the front; they must fit.
func (l *leaf[M, S]) prependFrom(src *leaf[M, S], i, j int) {
	if int(l.lo) < j-i {
		l.recenter(l.capacity() - l.n())
	}
	l.lo -= int32(j - i)
	l.copyFrom(int(l.lo), src, i, j)
}

// push appends an entry at the back (bulk loads); it must fit without
// moving the run.
func (l *leaf[M, S]) push(m M, s S, px mprefix) {
	l.set(int(l.hi), m, s, px)
	l.hi++
}
