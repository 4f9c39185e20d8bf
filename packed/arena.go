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
// by copying what is still referred to elsewhere: the whole arena at once
// while it is small, one chunk at a time once it is not (reclaim.go). A
// chunk emptied that way is freed and its number reused.
type arena struct {
	chunks  []chunk
	tail    int32 // the chunk records are appended to
	hint    int32 // every chunk number below it is in use
	used    int   // bytes of records, garbage included
	expect  int   // bytes of records a compaction is about to add
	garbage int   // bytes of records no member refers to any more
}

// chunk is one of an arena's buffers, with its share of the garbage. A
// chunk number with no buffer is free, unless it is held: one of the
// numbers a record longer than a chunk spans after its own.
type chunk struct {
	b    []byte
	dead uint32 // bytes of b's records no member refers to any more
	held bool
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
	ch := a.chunks[last].b
	off := last<<chunkShift | len(ch)
	ch = binary.LittleEndian.AppendUint64(ch, math.Float64bits(s))
	ch = binary.AppendUvarint(ch, uint64(len(b)))
	a.chunks[last].b = append(ch, b...)
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
	off := last<<chunkShift | len(a.chunks[last].b)
	a.chunks[last].b = append(a.chunks[last].b, rec...)
	a.used += len(rec)
	return srefAt(off), true
}

// room returns the chunk that a record of need bytes is appended to,
// making room for it: in the last chunk (grown if need be), or in a new
// one when it does not fit there (or, for a record longer than a chunk, in
// a buffer of its own that takes up the chunk numbers it spans), under the
// lowest free chunk numbers. It fails when the offsets would pass 4 GiB.
func (a *arena) room(need int) (int, bool) {
	last := int(a.tail)
	if a.chunks != nil && len(a.chunks[last].b)+need <= chunkSize {
		if ch := a.chunks[last].b; len(ch)+need > cap(ch) {
			// Only the last chunk grows: doubling, up to a chunk.
			a.chunks[last].b = append(make([]byte, 0, allocSize(uintptr(min(chunkSize, max(len(ch)+need, 2*cap(ch)))), false)), ch...)
		}
		return last, true
	}
	first := a.chunks == nil
	span := chunksFor(need)
	last = a.unused(span)
	if uint64(last+span) > 1<<(32-chunkShift) {
		return 0, false
	}
	for len(a.chunks) < last+span {
		a.chunks = append(a.chunks, chunk{})
	}
	if span == 1 {
		a.hint = int32(last + 1) // (unused took the lowest free number)
	}
	for x := last + 1; x < last+span; x++ {
		a.chunks[x].held = true
	}
	size := need // the first chunk starts as small as its first record
	switch {
	case need >= chunkSize:
	case a.expect-a.used >= chunkSize:
		size = chunkSize // (compaction knows what is coming)
	case !first:
		size = max(need, 4096) // later chunks start at 4 KiB
	}
	a.chunks[last].b = make([]byte, 0, allocSize(uintptr(size), false))
	if need < chunkSize || first {
		// (A longer record's buffer is full: the tail stays where it is,
		// rather than leave its unused room behind.)
		a.tail = int32(last)
	}
	return last, true
}

// chunksFor returns how many chunk numbers a buffer of n bytes takes up:
// one, or as many as a record longer than a chunk spans.
func chunksFor(n int) int { return max(1, (n+chunkSize-1)>>chunkShift) }

// unused returns the first of the lowest span free chunk numbers in a
// row, counting those past the end of the chunk list as free.
func (a *arena) unused(span int) int {
	run := 0
	for k := int(a.hint); k < len(a.chunks); k++ {
		if ch := &a.chunks[k]; ch.b != nil || ch.held {
			run = 0
		} else if run++; run == span {
			return k + 1 - span
		}
	}
	return len(a.chunks) - run
}

// drop frees chunk k (and the numbers its record spans), which no
// reference may point into any more.
func (a *arena) drop(k int) {
	ch := &a.chunks[k]
	a.used -= len(ch.b)
	a.garbage -= int(ch.dead)
	for x := k + chunksFor(len(ch.b)) - 1; x >= k; x-- {
		a.chunks[x] = chunk{}
	}
	a.hint = min(a.hint, int32(k))
	n := len(a.chunks)
	for n > 0 && a.chunks[n-1].b == nil && !a.chunks[n-1].held {
		n--
	}
	a.chunks = a.chunks[:n]
	a.hint = min(a.hint, int32(n))
}

// release counts record r as garbage: its member is gone (a fence may
// still refer to it).
func (a *arena) release(r sref) {
	n := a.size(r)
	a.garbage += n
	a.chunks[r.chunk()].dead += uint32(n)
}

// chunk returns the number of the chunk that holds record r.
func (r sref) chunk() int { return int(binary.LittleEndian.Uint32(r[:]) >> chunkShift) }

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
	return a.chunks[off>>chunkShift].b[off&(chunkSize-1):]
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
	n := allocSize(uintptr(cap(a.chunks))*sizeOf[chunk](), true)
	for _, ch := range a.chunks {
		n += allocSize(uintptr(cap(ch.b)), false)
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
	ch := a.chunks[off>>chunkShift].b
	x := uint64(off&(chunkSize-1)) + scoreSize
	if x >= uint64(len(ch)) {
		return false
	}
	v, k := binary.Uvarint(ch[x:])
	return k > 0 && x+uint64(k)+v <= uint64(len(ch))
}
