package packed

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrTooLarge is returned by Add when a standard-layout set's member bytes
// would exceed what its arena can address (4 GiB per set).
var ErrTooLarge = errors.New("packed: sorted set member storage exceeds 4 GiB")

// arena holds a standard-layout set's members, pointer-free: records, each
// the member's score (8 bytes, little-endian), a uvarint length and the
// member's bytes. Tree leaves, branch fences and index slots refer to a
// record by its offset (sref), so the garbage collector never scans member
// bytes. The index keeps no score of its own for standard members: a
// lookup reads the record anyway to compare the member's bytes, and the
// score beside them comes with the same cache line, which saves 8 bytes
// per index slot (see doc.go).
//
// Records live in chunks of 64 KiB: offset r is byte r&0xffff of chunk
// r>>16. Only the last chunk grows (doubling up to 64 KiB, by copying), and
// a record that does not fit in what is left of it starts the next, so the
// arena's slack is at most half of one chunk instead of a share of the
// whole, and growing never copies more than a chunk. A record longer than
// a chunk gets a buffer of its own, which takes up as many chunk numbers as
// its length spans (the later ones left empty).
//
// A removed member's record becomes garbage. Separators may still point at
// it (they only need some key between two leaves), so garbage is reclaimed
// by compaction, which copies every referenced record into a fresh arena;
// see zcore.compact.
type arena struct {
	chunks  [][]byte
	tail    int // the chunk records are appended to
	used    int // bytes of records, garbage included
	expect  int // bytes of records a compaction is about to add
	garbage int // bytes of records no member refers to any more
}

const (
	scoreSize  = 8
	chunkShift = 16
	chunkSize  = 1 << chunkShift
)

// add appends a record for member b with score s and returns its reference.
func (a *arena) add(b []byte, s float64) (sref, bool) {
	need := scoreSize + uvarintLen(uint64(len(b))) + len(b)
	last, ok := a.room(need)
	if !ok {
		return sref{}, false
	}
	ch := a.chunks[last]
	off := last<<chunkShift | len(ch)
	ch = binary.LittleEndian.AppendUint64(ch, math.Float64bits(s))
	ch = binary.AppendUvarint(ch, uint64(len(b)))
	a.chunks[last] = append(ch, b...)
	a.used += need
	return srefAt(off), true
}

// addRecord appends a copy of a whole record (from another arena's at,
// cut to its size) and returns its reference: compaction's add, which
// need not decode and encode the record again.
func (a *arena) addRecord(rec []byte) (sref, bool) {
	last, ok := a.room(len(rec))
	if !ok {
		return sref{}, false
	}
	off := last<<chunkShift | len(a.chunks[last])
	a.chunks[last] = append(a.chunks[last], rec...)
	a.used += len(rec)
	return srefAt(off), true
}

// room returns the chunk that a record of need bytes is appended to,
// making room for it: in the last chunk (grown if need be), or in a new
// one when it does not fit there (or, for a record longer than a chunk,
// in a buffer of its own that takes up the chunk numbers it spans). It
// fails when the offsets would pass 4 GiB.
func (a *arena) room(need int) (int, bool) {
	last := a.tail
	if a.chunks != nil && len(a.chunks[last])+need <= chunkSize {
		if ch := a.chunks[last]; len(ch)+need > cap(ch) {
			// Only the last chunk grows: doubling, up to a chunk.
			a.chunks[last] = append(make([]byte, 0, allocSize(uintptr(min(chunkSize, max(len(ch)+need, 2*cap(ch)))), false)), ch...)
		}
		return last, true
	}
	last = len(a.chunks)
	span := max(1, (need+chunkSize-1)>>chunkShift)
	if uint64(last+span) > 1<<(32-chunkShift) {
		return 0, false
	}
	size := need // the first chunk starts as small as its first record
	switch {
	case need >= chunkSize:
	case a.expect-a.used >= chunkSize:
		size = chunkSize // (compaction knows what is coming)
	case last > 0:
		size = max(need, 4096) // later chunks start at 4 KiB
	}
	a.chunks = append(a.chunks, make([]byte, 0, allocSize(uintptr(size), false)))
	for range span - 1 {
		a.chunks = append(a.chunks, nil)
	}
	a.tail = last
	return last, true
}

// srefAt returns the reference to offset off.
func srefAt(off int) (r sref) {
	binary.LittleEndian.PutUint32(r[:], uint32(off))
	return r
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// at returns the bytes of record r's chunk from the record on.
func (a *arena) at(r sref) []byte {
	off := binary.LittleEndian.Uint32(r[:])
	return a.chunks[off>>chunkShift][off&(chunkSize-1):]
}

// get returns the member bytes of record r. They are valid until the next
// compaction.
func (a *arena) get(r sref) []byte {
	b := a.at(r)[scoreSize:]
	n, k := uvarint(b)
	return b[k : k+n]
}

// score returns the score of record r.
func (a *arena) score(r sref) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(a.at(r)))
}

// setScore sets the score of record r.
func (a *arena) setScore(r sref, s float64) {
	binary.LittleEndian.PutUint64(a.at(r), math.Float64bits(s))
}

// capacity returns the bytes the arena has allocated.
func (a *arena) capacity() int {
	n := allocSize(uintptr(cap(a.chunks))*sizeOf[[]byte](), true)
	for _, ch := range a.chunks {
		n += allocSize(uintptr(cap(ch)), false)
	}
	return n
}

// record returns the whole of record r: score, length and member bytes.
func (a *arena) record(r sref) []byte {
	rec := a.at(r)
	n, k := uvarint(rec[scoreSize:])
	return rec[:scoreSize+k+n]
}

// size returns the bytes record r occupies.
func (a *arena) size(r sref) int { return len(a.record(r)) }

// uvarint decodes a record length; records are written by add, so the
// encoding is always well formed. It has no call in it, so that it and
// record inline.
func uvarint(b []byte) (n, k int) {
	var v uint64
	var s uint
	for i, c := range b {
		if c < 0x80 {
			return int(v | uint64(c)<<s), i + 1
		}
		v |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, len(b)
}

// equal reports whether record r holds member b.
func (a *arena) equal(r sref, b []byte) bool {
	return string(a.get(r)) == string(b)
}

// valid reports whether r is the offset of a well-formed record.
func (a *arena) valid(r sref) bool {
	off := binary.LittleEndian.Uint32(r[:])
	if int(off>>chunkShift) >= len(a.chunks) {
		return false
	}
	ch := a.chunks[off>>chunkShift]
	x := uint64(off&(chunkSize-1)) + scoreSize
	if x >= uint64(len(ch)) {
		return false
	}
	v, k := binary.Uvarint(ch[x:])
	return k > 0 && x+uint64(k)+v <= uint64(len(ch))
}

// compact copies every record the set still refers to (members and branch
// fences) into a fresh arena, dropping garbage. The index's slots, which
// hold the old offsets, are updated in place rather than rebuilt: each
// member's old record is overwritten with its new offset (the old arena is
// dropped afterwards), and a slot reads its member's new offset there, with
// no hashing and no probing. Fences go first, since a fence may share its
// record with a live member, and get copies of their own.
func (c *zcore[M, S, V]) compact() {
	if kindOf[M]() != MemberBytes {
		return
	}
	if c.n == 0 {
		c.ar, c.idx = arena{}, swiss[M, V]{}
		return
	}
	old := c.ar
	c.ar = arena{expect: old.used - old.garbage}
	c.walk(func(b *branch[M, S]) {
		for i := 1; i < b.n; i++ {
			r, _ := c.ar.addRecord(old.record(*asRef(&b.sepM[i])))
			b.sepM[i] = refMember[M](r)
		}
	}, func(*leaf[M, S]) {})
	c.walk(nil, func(l *leaf[M, S]) {
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
}
