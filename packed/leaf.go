package packed

// leaf is a B+tree leaf: a sorted run of (score, member) entries.
//
// Members and scores live in two pointer-free arrays (separate, so an INT32
// member and a FLOAT32 score take 8 bytes with no padding, and a binary
// search on scores touches only score cache lines). The live entries are
// keys[lo:hi]: the run floats inside its arrays so that an insertion or
// removal shifts whichever side of the position is shorter. A removal at
// the front (ZPOPMIN, sequential deletion) moves nothing at all, and an
// average random update moves a quarter of the leaf rather than half.
type leaf[M member, S score] struct {
	keys       []M // len(keys) is the leaf's capacity
	scores     []S
	lo, hi     int32
	prev, next *leaf[M, S]
}

func newLeaf[M member, S score](capacity int) *leaf[M, S] {
	return &leaf[M, S]{keys: make([]M, capacity), scores: make([]S, capacity)}
}

func (l *leaf[M, S]) n() int { return int(l.hi - l.lo) }

func (l *leaf[M, S]) free() int { return len(l.keys) - l.n() }

// live returns the entries.
func (l *leaf[M, S]) live() ([]M, []S) { return l.keys[l.lo:l.hi], l.scores[l.lo:l.hi] }

func (l *leaf[M, S]) key(i int) M { return l.keys[int(l.lo)+i] }

func (l *leaf[M, S]) score(i int) S { return l.scores[int(l.lo)+i] }

// recenter moves the entries to start at index lo.
func (l *leaf[M, S]) recenter(lo int) {
	n := l.n()
	copy(l.keys[lo:lo+n], l.keys[l.lo:l.hi])
	copy(l.scores[lo:lo+n], l.scores[l.lo:l.hi])
	l.lo, l.hi = int32(lo), int32(lo+n)
}

// grow reallocates the arrays with a larger capacity (small root leaves
// start small and grow up to the tree's leaf capacity).
func (l *leaf[M, S]) grow(capacity int) {
	ks, ss := l.live()
	l.keys = append(make([]M, 0, capacity), ks...)[:capacity]
	l.scores = append(make([]S, 0, capacity), ss...)[:capacity]
	l.lo, l.hi = 0, int32(len(ks))
}

// insertAt inserts an entry at position i. The leaf must not be full.
func (l *leaf[M, S]) insertAt(i int, m M, s S) {
	n, lo := l.n(), int(l.lo)
	front := i < n-i
	if front && lo == 0 || !front && int(l.hi) == len(l.keys) {
		// The cheap side is out of room: split the free space evenly.
		l.recenter((len(l.keys) - n) / 2)
		lo = int(l.lo)
	}
	// (A copy of nothing still calls memmove: appending and prepending,
	// as loads in order do, skip it.)
	if front && lo > 0 || int(l.hi) == len(l.keys) {
		if i > 0 {
			copy(l.keys[lo-1:lo-1+i], l.keys[lo:lo+i])
			copy(l.scores[lo-1:lo-1+i], l.scores[lo:lo+i])
		}
		l.lo--
	} else {
		if i < n {
			copy(l.keys[lo+i+1:l.hi+1], l.keys[lo+i:l.hi])
			copy(l.scores[lo+i+1:l.hi+1], l.scores[lo+i:l.hi])
		}
		l.hi++
	}
	l.keys[int(l.lo)+i], l.scores[int(l.lo)+i] = m, s
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
		copy(l.keys[lo+k:lo+k+i], l.keys[lo:lo+i])
		copy(l.scores[lo+k:lo+k+i], l.scores[lo:lo+i])
		l.lo += int32(k)
	} else {
		copy(l.keys[lo+i:], l.keys[lo+j:l.hi])
		copy(l.scores[lo+i:], l.scores[lo+j:l.hi])
		l.hi -= int32(k)
	}
}

// move rescores entry i to s and moves it to position j, where j is its
// position counted without the entry itself. Only the entries between the
// two positions shift.
func (l *leaf[M, S]) move(i, j int, s S) {
	lo := int(l.lo)
	m := l.keys[lo+i]
	if j > i {
		copy(l.keys[lo+i:lo+j], l.keys[lo+i+1:lo+j+1])
		copy(l.scores[lo+i:lo+j], l.scores[lo+i+1:lo+j+1])
	} else {
		copy(l.keys[lo+j+1:lo+i+1], l.keys[lo+j:lo+i])
		copy(l.scores[lo+j+1:lo+i+1], l.scores[lo+j:lo+i])
	}
	l.keys[lo+j], l.scores[lo+j] = m, s
}

// appendN appends entries at the back; they must fit.
func (l *leaf[M, S]) appendN(ks []M, ss []S) {
	if int(l.hi)+len(ks) > len(l.keys) {
		l.recenter(0)
	}
	copy(l.keys[l.hi:], ks)
	copy(l.scores[l.hi:], ss)
	l.hi += int32(len(ks))
}

// prependN inserts entries at the front; they must fit.
func (l *leaf[M, S]) prependN(ks []M, ss []S) {
	if int(l.lo) < len(ks) {
		l.recenter(len(l.keys) - l.n())
	}
	l.lo -= int32(len(ks))
	copy(l.keys[l.lo:], ks)
	copy(l.scores[l.lo:], ss)
}
