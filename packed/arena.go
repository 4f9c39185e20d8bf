package packed

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrTooLarge is returned by Add when a standard-layout set's member bytes
// would exceed what its arena can address (4 GiB per set).
var ErrTooLarge = errors.New("packed: sorted set member storage exceeds 4 GiB")

// arena holds a standard-layout set's members, pointer-free: one byte slice
// of records, each the member's score (8 bytes, little-endian), a uvarint
// length and the member's bytes. Tree leaves, branch fences and index slots
// refer to a record by its offset (sref), so the garbage collector never
// scans member bytes. The index keeps no score of its own for standard
// members: a lookup reads the record anyway to compare the member's bytes,
// and the score beside them comes with the same cache line, which saves 8
// bytes per index slot (see doc.go).
//
// A removed member's record becomes garbage. Separators may still point at
// it (they only need some key between two leaves), so garbage is reclaimed
// by compaction, which copies every referenced record into a fresh arena;
// see zcore.compact.
type arena struct {
	buf     []byte
	garbage int // bytes of records no member refers to any more
}

const scoreSize = 8

// add appends a record for member b with score s and returns its reference.
func (a *arena) add(b []byte, s float64) (sref, bool) {
	off := len(a.buf)
	need := off + scoreSize + len(b) + binary.MaxVarintLen64
	if uint64(need) > math.MaxUint32 {
		return sref{}, false
	}
	if need > cap(a.buf) {
		// Grow by an eighth rather than append's quarter: the arena is a
		// fifth of a standard set's memory, and copying bytes is cheap.
		n := max(need, cap(a.buf)+cap(a.buf)/8)
		if cap(a.buf) < 1024 {
			n = max(need, 2*cap(a.buf))
		}
		a.buf = append(make([]byte, 0, allocSize(uintptr(n), false)), a.buf...)
	}
	a.buf = binary.LittleEndian.AppendUint64(a.buf, math.Float64bits(s))
	a.buf = binary.AppendUvarint(a.buf, uint64(len(b)))
	a.buf = append(a.buf, b...)
	var r sref
	binary.LittleEndian.PutUint32(r[:], uint32(off))
	return r, true
}

// get returns the member bytes of record r. They are valid until the next
// add or compaction.
func (a *arena) get(r sref) []byte { return record(a.buf, r) }

// record returns the member bytes of record r in buf.
func record(buf []byte, r sref) []byte {
	b := buf[binary.LittleEndian.Uint32(r[:])+scoreSize:]
	n, k := uvarint(b)
	return b[k : k+n]
}

// score returns the score of record r.
func (a *arena) score(r sref) float64 { return recordScore(a.buf, r) }

func recordScore(buf []byte, r sref) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(buf[binary.LittleEndian.Uint32(r[:]):]))
}

// setScore sets the score of record r.
func (a *arena) setScore(r sref, s float64) {
	binary.LittleEndian.PutUint64(a.buf[binary.LittleEndian.Uint32(r[:]):], math.Float64bits(s))
}

// size returns the bytes record r occupies.
func (a *arena) size(r sref) int {
	n, k := uvarint(a.buf[binary.LittleEndian.Uint32(r[:])+scoreSize:])
	return scoreSize + n + k
}

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
	return string(record(a.buf, r)) == string(b)
}

// valid reports whether r is the offset of a well-formed record.
func (a *arena) valid(r sref) bool {
	off := uint64(binary.LittleEndian.Uint32(r[:])) + scoreSize
	if off >= uint64(len(a.buf)) {
		return false
	}
	v, k := binary.Uvarint(a.buf[off:])
	return k > 0 && off+uint64(k)+v <= uint64(len(a.buf))
}

// compact copies every record the set still refers to (members and branch
// fences) into a fresh arena, dropping garbage, and rebuilds the index,
// whose slots hold the old offsets.
func (c *zcore[M, S, V]) compact() {
	if kindOf[M]() != MemberBytes {
		return
	}
	if c.n == 0 {
		c.ar, c.idx = arena{}, swiss[M, V]{}
		return
	}
	old := c.ar.buf
	c.ar = arena{buf: make([]byte, 0, len(old)-c.ar.garbage)}
	move := func(m *M) {
		r, _ := c.ar.add(record(old, *asRef(m)), recordScore(old, *asRef(m)))
		*m = refMember[M](r)
	}
	c.walk(func(b *branch[M, S]) {
		for i := 1; i < b.n; i++ {
			move(&b.sepM[i])
		}
	}, func(l *leaf[M, S]) {
		for i := l.lo; i < l.hi; i++ {
			move(&l.keys[i])
		}
	})
	if c.indexed() {
		c.buildIndex(c.n)
	}
}
