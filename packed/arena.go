package packed

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrTooLarge is returned by Add when a standard-layout set's member bytes
// would exceed what its arena can address (4 GiB per set).
var ErrTooLarge = errors.New("packed: sorted set member storage exceeds 4 GiB")

// arena holds the bytes of a standard-layout set's members, pointer-free:
// one byte slice of records, each a uvarint length followed by the member's
// bytes. Tree leaves, branch separators and index slots refer to a record by
// its offset (sref), so a rescore never touches the member's bytes and the
// garbage collector never scans them.
//
// A removed member's record becomes garbage. Separators may still point at
// it (they only need some key between two leaves), so garbage is reclaimed
// by compaction, which copies every referenced record into a fresh arena;
// see zcore.compact.
type arena struct {
	buf     []byte
	garbage int // bytes of records no member refers to any more
}

// add appends a record for b and returns its reference.
func (a *arena) add(b []byte) (sref, bool) {
	off := len(a.buf)
	if uint64(off)+uint64(len(b))+binary.MaxVarintLen64 > math.MaxUint32 {
		return sref{}, false
	}
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
	b := buf[binary.LittleEndian.Uint32(r[:]):]
	n, k := uvarint(b)
	return b[k : k+n]
}

// size returns the bytes record r occupies.
func (a *arena) size(r sref) int {
	n, k := uvarint(a.buf[binary.LittleEndian.Uint32(r[:]):])
	return n + k
}

// uvarint decodes a record length; records are written by add, so the
// encoding is always well formed.
func uvarint(b []byte) (n, k int) {
	if b[0] < 0x80 {
		return int(b[0]), 1
	}
	v, k := binary.Uvarint(b)
	return int(v), k
}

// valid reports whether r is the offset of a well-formed record.
func (a *arena) valid(r sref) bool {
	off := uint64(binary.LittleEndian.Uint32(r[:]))
	if off >= uint64(len(a.buf)) {
		return false
	}
	v, k := binary.Uvarint(a.buf[off:])
	return k > 0 && off+uint64(k)+v <= uint64(len(a.buf))
}

// compact copies every record the set still refers to (members and branch
// fences) into a fresh arena, dropping garbage, and rebuilds the index,
// whose slots hold the old offsets.
func (c *zcore[M, S]) compact() {
	if kindOf[M]() != MemberBytes {
		return
	}
	if c.n == 0 {
		c.ar, c.idx = arena{}, swiss[M, S]{}
		return
	}
	old := c.ar.buf
	c.ar = arena{buf: make([]byte, 0, len(old)-c.ar.garbage)}
	move := func(m *M) {
		r, _ := c.ar.add(record(old, *asRef(m)))
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
