package packed

import "unsafe"

// Searches over sorted runs. Member searches are specialized per member
// kind at the top, so the inner loops compare native integers inline
// instead of calling a comparator. Integer members get branch-free
// four-way searches (pairBound) and paired searches for rescores
// (pairBound2); UUID members paired searches. Standard members, whose
// comparisons read the arena, are searched by (score, member prefix) with
// the same branch-free steps, and their bytes are compared only where
// score and prefix both tie (bytesBound, tieFix); a stored standard member
// is found there by its arena reference, without reading bytes at all
// (leafFind, refFind). doc.go, "Searches", has the measurements.

// asSlice reinterprets a member slice as its concrete element type.
func asSlice[T any, M member](ks []M) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(ks))), len(ks))
}

// keyBound returns the first index i with (ss[i], ks[i]) >= (s, p), or >
// when upper is set, for packed members (standard runs have bytesBound):
// a binary search that compares members only where scores tie, with the
// member comparison inlined per kind.
func (c *zcore[M, S, V]) keyBound(ks []M, ss []S, s S, p *probe[M], upper bool) int {
	switch kindOf[M]() {
	case MemberInt32:
		return pairBound(asSlice[int32](ks), ss, s, *asI32(&p.m), upper)
	case MemberInt64:
		return pairBound(asSlice[int64](ks), ss, s, *asI64(&p.m), upper)
	}
	lo, hi := 0, len(ss)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if ss[h] < s || ss[h] == s && c.cmpMember(p, &ks[h]) > 0 {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if upper && lo < len(ss) && ss[lo] == s && c.eqMember(p, &ks[lo]) {
		lo++
	}
	return lo
}

// pairBound is keyBound for integer members: a four-way search. Each step
// compares the key with the entries at the three quarter points of the
// remaining run at once (three independent loads and compares, their 0/1
// results summed, no branch to mispredict) and keeps one quarter, so a
// 512-entry leaf takes five steps where a binary search takes nine levels,
// half of which mispredict on random keys: 41 against 56 ns on a random
// 512-entry leaf. An upper bound needs keys that are unique in the run, as
// integer members are; member prefixes repeat, so their searches ask for
// lower bounds only (tieFix finds a run's end as the lower bound of the
// next prefix).
func pairBound[K int32 | int64 | uint16, S score](ks []K, ss []S, s S, m K, upper bool) int {
	if upper {
		// (s', k) <= (s, m) is (s', k) < (s, m+1) for integers, unless m+1
		// overflows.
		if m+1 < m {
			return pairBoundBranchy(ks, ss, s, m, upper)
		}
		m++
	}
	n := len(ss)
	ks = ks[:n]
	// The answer lies in [b, b+n] (precedes says which entries order before
	// the key). A key at either end is answered at once: removing in order
	// (sequential deletion, ZPOPMIN) and appending in order, whose branches
	// a binary search would predict perfectly, stay as cheap as that.
	if n == 0 || ss[0] > s || ss[0] == s && ks[0] >= m {
		return 0
	}
	if ss[n-1] < s || ss[n-1] == s && ks[n-1] < m {
		return n
	}
	b := 0
	for n > 3 {
		q := n >> 2
		c := precedes(ks, ss, b+q, s, m) + precedes(ks, ss, b+2*q, s, m) + precedes(ks, ss, b+3*q, s, m)
		// c quarters are before the key. Keeping n-3q entries (q, or up to
		// three more after the last quarter point) stays in bounds.
		b += q * int(c)
		n -= 3 * q
	}
	for n > 1 {
		h := n >> 1
		b += h & -int(precedes(ks, ss, b+h, s, m))
		n -= h
	}
	if n == 0 {
		return b
	}
	return b + int(precedes(ks, ss, b, s, m))
}

// scoreBounds returns the run of entries whose score is s, [lo, hi): the
// first index with ss[i] >= s and the first with ss[i] > s. The two bounds
// are two branch-free four-way searches in lockstep, as in pairBound2.
func scoreBounds[S score](ss []S, s S) (lo, hi int) {
	n := len(ss)
	if n == 0 || ss[0] > s {
		return 0, 0
	}
	if ss[n-1] < s {
		return n, n
	}
	if ss[0] == s && ss[n-1] == s { // one score throughout, as in counters that start equal
		return 0, n
	}
	if ss[0] == s && ss[1] > s { // the first entry alone, as in removals in order
		return 0, 1
	}
	// Both answers lie in [b, b+n]: the steps depend on n alone, so the two
	// chains take the same ones.
	b1, b2 := 0, 0
	for n > 3 {
		q := n >> 2
		c1 := b2u(ss[b1+q] < s) + b2u(ss[b1+2*q] < s) + b2u(ss[b1+3*q] < s)
		c2 := b2u(ss[b2+q] <= s) + b2u(ss[b2+2*q] <= s) + b2u(ss[b2+3*q] <= s)
		b1 += q * int(c1)
		b2 += q * int(c2)
		n -= 3 * q
	}
	for n > 1 {
		h := n >> 1
		b1 += h & -int(b2u(ss[b1+h] < s))
		b2 += h & -int(b2u(ss[b2+h] <= s))
		n -= h
	}
	return b1 + int(b2u(ss[b1] < s)), b2 + int(b2u(ss[b2] <= s))
}

// refScanMax is the longest run of entries tied on score and prefix that
// refFind scans for a standard member's reference; longer runs (only in
// leaves configured larger than the default) are searched by member
// bytes. Scanning a whole default leaf's 512 references (2 KiB, four
// compares at a time) costs less than the nine arena reads and byte
// comparisons of a binary search among members that tie: before leaves
// kept member prefixes, tied increments took 502 ns with a limit of 64 and
// 423 with no limit.
const refScanMax = 1024

// leafFind returns the position in leaf l of member p's entry, whose score
// s and stored member m the index gave. For standard members it finds the
// entries tied with it on score and prefix and scans them for the
// reference m, so the member bytes are never read: a live member has
// exactly one record, and its leaf entry and index slot refer to the same
// one. (Branch fences may refer to a removed member's old record, so
// descents compare bytes where fences tie.)
func (c *zcore[M, S, V]) leafFind(l *leaf[M, S], s S, p *probe[M], m M) int {
	if okeyLeaves[M, S]() {
		es, k := l.entries(), okeyOf(s, m)
		i := lowerBound(es, k)
		if i >= len(es) || es[i] != k {
			panic("packed: index and tree disagree")
		}
		return i
	}
	ks, ss := l.live()
	if kindOf[M]() != MemberBytes {
		i := c.keyBound(ks, ss, s, p, false)
		if i >= len(ss) || ss[i] != s || ks[i] != m {
			panic("packed: index and tree disagree")
		}
		return i
	}
	return c.refFind(ks, ss, pairBound(l.prefixes(), ss, s, memberPrefix(p.b), false), s, p, m)
}

// refFind returns the position of standard member m, stored with score s,
// in a leaf's entries ks and ss, from lo, the first entry whose (score,
// prefix) is not below m's. A leaf entry refers to its member's one
// record, so the first entry from there that refers to m is m's: it scans
// without looking for the run's end.
func (c *zcore[M, S, V]) refFind(ks []M, ss []S, lo int, s S, p *probe[M], m M) int {
	end := min(len(ks), lo+refScanMax)
	i := lo
	for ; i < min(end, lo+8); i++ { // few ties: the common case
		if ks[i] == m {
			break
		}
	}
	if i == lo+8 {
		if j := indexRef(asSlice[uint32](ks[i:end]), *(*uint32)(unsafe.Pointer(&m))); j >= 0 {
			i += j
		} else {
			i = end
		}
	}
	if i < end {
		if ss[i] != s {
			panic("packed: index and tree disagree")
		}
		return i
	}
	// A run longer than refScanMax (leaves configured larger than the
	// default): search it by member bytes.
	lo, hi := scoreBounds(ss, s)
	if i := lo + c.tieBound(ks[lo:hi], p, false); i < hi && ks[i] == m {
		return i
	}
	panic("packed: index and tree disagree")
}

// lowerBound returns the first index i with xs[i] >= x in a sorted run
// (scores, or order keys): scoreBounds's first chain alone, with the
// answers at either end first.
func lowerBound[T float32 | float64 | uint64](xs []T, x T) int {
	n := len(xs)
	if n == 0 || xs[0] >= x {
		return 0
	}
	if xs[n-1] < x {
		return n
	}
	b := 0
	for n > 3 {
		q := n >> 2
		b += q * int(b2u(xs[b+q] < x)+b2u(xs[b+2*q] < x)+b2u(xs[b+3*q] < x))
		n -= 3 * q
	}
	for n > 1 {
		h := n >> 1
		b += h & -int(b2u(xs[b+h] < x))
		n -= h
	}
	return b + int(b2u(xs[b] < x))
}

// indexRef returns the index of r in refs, or -1: a scan four at a time,
// whose one unpredictable branch is the last.
func indexRef(refs []uint32, r uint32) int {
	i := 0
	for ; i+4 <= len(refs); i += 4 {
		q := refs[i : i+4 : i+4]
		if q[0] == r || q[1] == r || q[2] == r || q[3] == r {
			break
		}
	}
	for ; i < len(refs); i++ {
		if refs[i] == r {
			return i
		}
	}
	return -1
}

// tieBound returns the first index i with ks[i] >= p (> when upper) in a
// run of standard members whose scores tie: a binary search whose
// comparisons read the arena.
func (c *zcore[M, S, V]) tieBound(ks []M, p *probe[M], upper bool) int {
	lo, hi := 0, len(ks)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if d := c.cmpMember(p, &ks[h]); d > 0 || d == 0 && upper {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// pairBoundBranchy is a plain binary search; pairBound uses it for an
// upper bound at the largest member, whose m+1 would overflow.
func pairBoundBranchy[K int32 | int64 | uint16, S score](ks []K, ss []S, s S, m K, upper bool) int {
	lo, hi := 0, len(ss)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if ss[h] < s || ss[h] == s && ks[h] < m {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if upper && lo < len(ss) && ss[lo] == s && ks[lo] == m {
		lo++
	}
	return lo
}

// pairBound2 is pairBound for two keys at once, each over its own run (the
// two runs may be the same). Its steps are branch-free (SETcc and masks,
// no jumps), so the two searches are two independent chains of loads and
// compares that the CPU overlaps: both cost about as much as one branchy
// search, whose every level mispredicts half the time on random keys.
// rescore uses it to find an entry's old and new positions together.
func pairBound2[K int32 | int64 | uint16, S score](ks1 []K, ss1 []S, s1 S, m1 K, ks2 []K, ss2 []S, s2 S, m2 K, upper bool) (int, int) {
	n1, n2 := len(ss1), len(ss2)
	// (s', k) <= (s, m) is (s', k) < (s, m+1) for integers, unless m+1
	// overflows; that and empty runs go to pairBound.
	if n1 == 0 || n2 == 0 || upper && (m1+1 < m1 || m2+1 < m2) {
		return pairBound(ks1, ss1, s1, m1, upper), pairBound(ks2, ss2, s2, m2, upper)
	}
	if upper {
		m1, m2 = m1+1, m2+1
	}
	ks1, ks2 = ks1[:n1], ks2[:n2]
	// Each answer lies in [b, b+n]. Four-way steps first, as in pairBound
	// (a run of three or fewer stays put, q = 0, while the other goes on),
	// then binary steps down to one entry. The loops are kept lean: every
	// extra live value spills a register onto the chain from one step to
	// the next.
	b1, b2 := 0, 0
	if n1 == n2 {
		// One leaf, or the root branch: one length, fewer live values.
		n := n1
		for n > 3 {
			q := n >> 2
			c1 := precedes(ks1, ss1, b1+q, s1, m1) + precedes(ks1, ss1, b1+2*q, s1, m1) + precedes(ks1, ss1, b1+3*q, s1, m1)
			c2 := precedes(ks2, ss2, b2+q, s2, m2) + precedes(ks2, ss2, b2+2*q, s2, m2) + precedes(ks2, ss2, b2+3*q, s2, m2)
			b1 += q * int(c1)
			b2 += q * int(c2)
			n -= 3 * q
		}
		n1, n2 = n, n
	}
	for n1 > 3 || n2 > 3 {
		q1, q2 := n1>>2, n2>>2
		c1 := precedes(ks1, ss1, b1+q1, s1, m1) + precedes(ks1, ss1, b1+2*q1, s1, m1) + precedes(ks1, ss1, b1+3*q1, s1, m1)
		c2 := precedes(ks2, ss2, b2+q2, s2, m2) + precedes(ks2, ss2, b2+2*q2, s2, m2) + precedes(ks2, ss2, b2+3*q2, s2, m2)
		b1 += q1 * int(c1)
		b2 += q2 * int(c2)
		n1 -= 3 * q1
		n2 -= 3 * q2
	}
	for n1 > 1 || n2 > 1 {
		h1, h2 := n1>>1, n2>>1
		c1 := precedes(ks1, ss1, b1+h1, s1, m1)
		c2 := precedes(ks2, ss2, b2+h2, s2, m2)
		b1 += h1 & -int(c1)
		b2 += h2 & -int(c2)
		n1 -= h1
		n2 -= h2
	}
	return b1 + int(precedes(ks1, ss1, b1, s1, m1)), b2 + int(precedes(ks2, ss2, b2, s2, m2))
}

// precedes is 1 if entry x of a run (members ks, scores ss) orders before
// key (s, m), else 0: its score is lower, or equal (<= and not <; scores are
// never NaN) with a lower member. It inlines to SETcc and masks, no jump.
func precedes[K int32 | int64 | uint16, S score](ks []K, ss []S, x int, s S, m K) uint {
	return b2u(ss[x] < s) | b2u(ss[x] <= s)&b2u(ks[x] < m)
}

// b2u is 1 for true and 0 for false; the compiler makes it a SETcc.
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// keyBound2 is keyBound for two keys of the same member p at once; only
// packed members have it (standard members have bytesBound and tieFix).
func (c *zcore[M, S, V]) keyBound2(ks1 []M, ss1 []S, s1 S, ks2 []M, ss2 []S, s2 S, p *probe[M], upper bool) (int, int) {
	switch kindOf[M]() {
	case MemberInt32:
		m := *asI32(&p.m)
		return pairBound2(asSlice[int32](ks1), ss1, s1, m, asSlice[int32](ks2), ss2, s2, m, upper)
	case MemberInt64:
		m := *asI64(&p.m)
		return pairBound2(asSlice[int64](ks1), ss1, s1, m, asSlice[int64](ks2), ss2, s2, m, upper)
	case MemberUUID:
		m := *asUUID(&p.m)
		return uuidBound2(asSlice[uuid](ks1), ss1, s1, asSlice[uuid](ks2), ss2, s2, m, upper)
	}
	panic("packed: keyBound2 on a member kind without it")
}

// uuidBound2 is pairBound2 for UUID members (two unsigned halves compared
// in order), of the same member m.
func uuidBound2[S score](ks1 []uuid, ss1 []S, s1 S, ks2 []uuid, ss2 []S, s2 S, m uuid, upper bool) (int, int) {
	n1, n2 := len(ss1), len(ss2)
	if n1 == 0 || n2 == 0 {
		return uuidBound(ks1, ss1, s1, m, upper), uuidBound(ks2, ss2, s2, m, upper)
	}
	ks1, ks2 = ks1[:n1], ks2[:n2]
	up := b2u(upper)
	before := func(ks []uuid, ss []S, x int, s S) uint {
		k := &ks[x]
		mb := b2u(k[0] < m[0]) | b2u(k[0] == m[0])&(b2u(k[1] < m[1])|b2u(k[1] == m[1])&up)
		return b2u(ss[x] < s) | b2u(ss[x] == s)&mb
	}
	b1, b2 := 0, 0
	for n1 > 1 || n2 > 1 {
		h1, h2 := n1>>1, n2>>1
		c1 := before(ks1, ss1, b1+h1, s1)
		c2 := before(ks2, ss2, b2+h2, s2)
		b1 += h1 & -int(c1)
		b2 += h2 & -int(c2)
		n1 -= h1
		n2 -= h2
	}
	return b1 + int(before(ks1, ss1, b1, s1)), b2 + int(before(ks2, ss2, b2, s2))
}

// uuidBound is the plain binary search uuidBound2 falls back on for an
// empty run.
func uuidBound[S score](ks []uuid, ss []S, s S, m uuid, upper bool) int {
	lo, hi := 0, len(ss)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		k := &ks[h]
		if ss[h] < s || ss[h] == s && (k[0] < m[0] || k[0] == m[0] && (k[1] < m[1] || upper && k[1] == m[1])) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// bytesBound is keyBound for a standard run (a leaf's entries or a
// branch's fences, with their prefixes pf): the first index i with
// (ss[i], ks[i]) >= (s, p), or > when upper. It searches (score, prefix)
// pairs branch-free, as pairBound does integers, and compares member bytes
// only among the entries whose score and prefix both tie with the key's
// (tieFix). x is the key's prefix, memberPrefix(p.b).
func (c *zcore[M, S, V]) bytesBound(ks []M, ss []S, pf []mprefix, s S, p *probe[M], x mprefix, upper bool) int {
	return c.tieFix(ks, ss, pf, s, p, x, pairBound(pf, ss, s, x, false), upper)
}

// tieFix finishes a search of a standard run for key (s, p) with prefix
// x from i, the first index whose (score, prefix) is not below (s, x):
// it steps over the entries that tie on both and order before the key
// (or with it, when upper), comparing member bytes, one by one through a
// few and by binary search through more.
func (c *zcore[M, S, V]) tieFix(ks []M, ss []S, pf []mprefix, s S, p *probe[M], x mprefix, i int, upper bool) int {
	n := len(ss)
	for k := 0; i < n && ss[i] == s && pf[i] == x; k++ {
		if k == 4 {
			var j int // the run's end: the first entry above (s, x)
			if x < maxPrefix {
				j = pairBound(pf, ss, s, x+1, false)
			} else {
				_, j = scoreBounds(ss, s)
			}
			return i + c.tieBound(ks[i:j], p, upper)
		}
		if d := c.cmpMember(p, &ks[i]); d < 0 || d == 0 && !upper {
			return i
		}
		i++
	}
	return i
}
