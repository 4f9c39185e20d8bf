package packed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"iter"
	"math"
	"slices"
)

// A standard set starts in its small form, one pointer-free byte slice of
// its entries in (score, member) order, as Redis keeps a small sorted set
// in a listpack: each entry is its score (8 bytes, little-endian float64
// bits), its member's length (one byte) and the member's bytes. Every
// operation scans the slice; the set moves to the tree and index (zcore)
// when it would hold more than smallMaxEntries members or a member longer
// than smallMaxMember bytes, Redis's own defaults for listpacks
// (zset-max-listpack-entries and -value), and never moves back while it
// lives. A decoded set takes the small form when it fits.
//
// A tree and index cost a one-member set about 470 bytes (the set's core,
// a leaf header and arrays, an arena chunk) and scatter a lookup over half
// a dozen allocations; the small form costs it 88 bytes in two, and a
// lookup scans one buffer. Per-user rate limiters and queues hold
// millions of such sets.
const (
	smallMaxEntries = 128
	smallMaxMember  = 64
)

// errGrowSmall: the operation needs the tree form (ZSet.Add moves the set
// there and repeats it). The small form has changed nothing.
var errGrowSmall = errors.New("packed: set outgrows its small form")

// smallSet is a new standard set: the set and its small form in one
// allocation, so that a lookup misses the cache once less (ZADD across
// 100,000 keys, -P 16: 5% more writes a second). A set that outgrows its
// small form keeps the allocation.
type smallSet struct {
	z ZSet
	s small
}

// newSmallSet returns an empty standard set in its small form.
func newSmallSet() *ZSet {
	a := new(smallSet)
	a.z = ZSet{layout: Standard, c: &a.s, shell: true}
	return &a.z
}

type small struct {
	buf []byte
	// n is the entries' count: an int32 keeps the struct in 32 bytes.
	n int32
	// shared: a View holds buf (snapshot), so a write copies it first.
	shared bool
}

// smallEntry is the fixed part of an entry: score and member length.
const smallEntry = 9

// at decodes the entry at off and returns its score, member and the offset
// of the next entry. The member aliases buf.
func (s *small) at(off int) (float64, []byte, int) {
	return smallAt(s.buf, off)
}

func smallAt(buf []byte, off int) (float64, []byte, int) {
	sc := math.Float64frombits(binary.LittleEndian.Uint64(buf[off:]))
	end := off + smallEntry + int(buf[off+8])
	return sc, buf[off+smallEntry : end : end], end
}

func (s *small) len() int { return int(s.n) }

// find returns m's offset, rank and score, when it is here. It reads an
// entry's length first and its bytes only when the lengths agree.
func (s *small) find(m []byte) (off, rank int, sc float64, found bool) {
	buf := s.buf
	for off < len(buf) {
		l := int(buf[off+8])
		next := off + smallEntry + l
		if l == len(m) && string(buf[off+smallEntry:next]) == string(m) {
			return off, rank, math.Float64frombits(binary.LittleEndian.Uint64(buf[off:])), true
		}
		off, rank = next, rank+1
	}
	return 0, 0, 0, false
}

// writable copies a buffer a View shares before the set changes it.
func (s *small) writable() {
	if s.shared {
		s.buf = append(make([]byte, 0, cap(s.buf)), s.buf...)
		s.shared = false
	}
}

// put inserts (sc, m) where it belongs; m is not here.
func (s *small) put(sc float64, m []byte) {
	off := 0
	for off < len(s.buf) {
		v, b, next := s.at(off)
		if v > sc || v == sc && bytes.Compare(b, m) > 0 {
			break
		}
		off = next
	}
	old, need := len(s.buf), smallEntry+len(m)
	if cap(s.buf) < old+need {
		// A quarter more than it needs: a set that grows an entry at a
		// time copies itself every few entries, not at each.
		nb := make([]byte, old, old+need+(old+need)/4)
		copy(nb, s.buf)
		s.buf = nb
	}
	s.buf = s.buf[:old+need]
	copy(s.buf[off+need:], s.buf[off:old])
	binary.LittleEndian.PutUint64(s.buf[off:], math.Float64bits(sc))
	s.buf[off+8] = byte(len(m))
	copy(s.buf[off+smallEntry:], m)
	s.n++
}

// cut removes the bytes [off, end), which hold k entries, and gives memory
// back once the buffer is mostly empty.
func (s *small) cut(off, end, k int) {
	s.buf = append(s.buf[:off], s.buf[end:]...)
	s.n -= int32(k)
	switch {
	case s.n == 0:
		s.buf = nil
	case cap(s.buf) > 64 && cap(s.buf) > 2*len(s.buf):
		s.buf = append(make([]byte, 0, len(s.buf)+len(s.buf)/4), s.buf...)
	}
}

func (s *small) add(m []byte, sc float64, f AddFlags) (AddResult, error) {
	if sc != sc {
		return AddResult{}, ErrNaN
	}
	off, _, cur, found := s.find(m)
	if !found {
		if f&AddXX != 0 {
			return AddResult{Skipped: true}, nil
		}
		if s.n >= smallMaxEntries || len(m) > smallMaxMember {
			return AddResult{}, errGrowSmall
		}
		s.writable()
		s.put(sc, m)
		return AddResult{Score: sc, Added: true}, nil
	}
	if f == 0 && sc == cur {
		return AddResult{Score: cur}, nil
	}
	res, done, err := decideUpdate(cur, sc, f)
	if done || err != nil {
		return res, err
	}
	s.writable()
	// m is the caller's, equal to the member cut out.
	s.cut(off, off+smallEntry+len(m), 1)
	s.put(res.Score, m)
	return res, nil
}

func (s *small) remove(m []byte) bool {
	off, _, _, found := s.find(m)
	if !found {
		return false
	}
	s.writable()
	s.cut(off, off+smallEntry+len(m), 1)
	return true
}

func (s *small) score(m []byte) (float64, bool) {
	_, _, sc, found := s.find(m)
	return sc, found
}

func (s *small) rank(m []byte) (int, float64, bool) {
	_, r, sc, found := s.find(m)
	return r, sc, found
}

func (s *small) scoreRank(x float64, inclusive bool) int {
	r := 0
	for off := 0; off < len(s.buf); r++ {
		v, _, next := s.at(off)
		if v > x || !inclusive && v == x {
			break
		}
		off = next
	}
	return r
}

// offsets fills offs with each entry's offset.
func (s *small) offsets(offs *[smallMaxEntries]uint16) {
	for i, off := 0, 0; off < len(s.buf); i++ {
		offs[i] = uint16(off)
		_, _, off = s.at(off)
	}
}

// lexRank halves ranks 0 to n, as the tree does when the scores differ
// (core.go, lexRank), so both forms find the same one of the boundaries
// that members out of order leave.
func (s *small) lexRank(m []byte, inclusive bool) int {
	var offs [smallMaxEntries]uint16
	s.offsets(&offs)
	lo, hi := 0, int(s.n)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		_, b, _ := s.at(int(offs[h]))
		if c := bytes.Compare(m, b); c > 0 || inclusive && c == 0 {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

func (s *small) iterate(start, end int, reverse bool, fn func(m []byte, s float64) bool) {
	if start >= end {
		return
	}
	if reverse {
		var offs [smallMaxEntries]uint16
		s.offsets(&offs)
		for r := end - 1; r >= start; r-- {
			if v, b, _ := s.at(int(offs[r])); !fn(b, v) {
				return
			}
		}
		return
	}
	off := s.skip(0, start)
	for r := start; r < end; r++ {
		v, b, next := s.at(off)
		if !fn(b, v) {
			return
		}
		off = next
	}
}

// skip returns the offset k entries after off.
func (s *small) skip(off, k int) int {
	for ; k > 0; k-- {
		off += smallEntry + int(s.buf[off+8])
	}
	return off
}

func (s *small) removeRange(start, end int) int {
	off := s.skip(0, start)
	s.writable()
	s.cut(off, s.skip(off, end-start), end-start)
	return end - start
}

// bytes counts the entries' slice: the small struct is part of its set's
// allocation (smallSet, ZSet.header).
func (s *small) bytes() int { return allocSize(uintptr(cap(s.buf)), false) }

func (s *small) stats() Stats {
	return Stats{Len: int(s.n), LeafCap: DefaultLeafCap, ArenaBytes: cap(s.buf), Bytes: s.bytes()}
}

func (s *small) caps() (int, int) { return DefaultLeafCap, maxFanout }

func (s *small) check() error {
	if s.n > smallMaxEntries {
		return errors.New("small set holds more than its limit")
	}
	var prev []byte
	var prevS float64
	var offs [smallMaxEntries]uint16
	n := 0
	for off := 0; off < len(s.buf); n++ {
		if off+smallEntry > len(s.buf) || off+smallEntry+int(s.buf[off+8]) > len(s.buf) {
			return errors.New("small set: an entry runs past the buffer")
		}
		v, b, next := s.at(off)
		switch {
		case v != v:
			return errors.New("small set: NaN score")
		case len(b) > smallMaxMember:
			return errors.New("small set: member longer than its limit")
		case n > 0 && !(v > prevS || v == prevS && bytes.Compare(b, prev) > 0):
			return errors.New("small set: entries out of order")
		}
		if n == smallMaxEntries {
			return errors.New("small set holds more entries than its limit")
		}
		offs[n] = uint16(off)
		prev, prevS, off = b, v, next
	}
	if n != int(s.n) {
		return errors.New("small set: count disagrees with its entries")
	}
	// Members sorted by their bytes, to find one held twice.
	member := func(off uint16) []byte { _, b, _ := s.at(int(off)); return b }
	byMember := offs[:n]
	slices.SortFunc(byMember, func(a, b uint16) int { return bytes.Compare(member(a), member(b)) })
	for i := 1; i < n; i++ {
		if bytes.Equal(member(byMember[i]), member(byMember[i-1])) {
			return errors.New("small set: member held twice")
		}
	}
	return nil
}

// clone is for ZSet.Clone, which makes a smallSet of its own.
func (s *small) clone() core {
	return &small{n: s.n, buf: append(make([]byte, 0, cap(s.buf)), s.buf...)}
}

func (s *small) snapshot() viewCore {
	if s.buf != nil {
		s.shared = true
	}
	return smallView(s.buf)
}

// load fills an empty small set with n entries in order; errGrowSmall when
// they do not fit it. It reads the entries twice, first for their size
// (at most n entries of smallMaxMember bytes each: a longer member ends
// the load before anything is allocated for it).
func (s *small) load(n int, entries iter.Seq2[[]byte, float64]) error {
	if n > smallMaxEntries {
		return errGrowSmall
	}
	size, k := 0, 0
	for m := range entries {
		if len(m) > smallMaxMember {
			return errGrowSmall
		}
		if k++; k > n {
			return errOrder
		}
		size += smallEntry + len(m)
	}
	t := small{buf: make([]byte, 0, size)}
	for m, v := range entries {
		t.buf = binary.LittleEndian.AppendUint64(t.buf, math.Float64bits(v))
		t.buf = append(t.buf, byte(len(m)))
		t.buf = append(t.buf, m...)
		t.n++
	}
	// Order, NaN, a member twice, and a count that changed between the
	// passes: what check refuses.
	if int(t.n) != n || t.check() != nil {
		return errOrder
	}
	if n > 0 {
		s.n, s.buf = t.n, t.buf
	}
	return nil
}

func (s *small) encode(w *bufio.Writer) error { return smallView(s.buf).encode(w) }

// decode reads n standard entries into an empty small set; errGrowSmall
// when they do not fit it.
func (s *small) decode(r *bufio.Reader, n int) ([][]byte, error) {
	ents, err := readStandard(r, n)
	if err != nil {
		return nil, err
	}
	return nil, s.load(n, ents.all)
}

// smallView is a snapshot of a small set: its buffer, which the set copies
// before it next writes.
type smallView []byte

func (v smallView) each(fn func(m []byte, s float64) bool) {
	for off := 0; off < len(v); {
		sc, b, next := smallAt(v, off)
		if !fn(b, sc) {
			return
		}
		off = next
	}
}

// encode writes the entries as the tree writes a leaf (encode.go): one
// block of every score, then every member.
func (v smallView) encode(w *bufio.Writer) error {
	n := 0
	for off := 0; off < len(v); n++ {
		_, _, off = smallAt(v, off)
	}
	if n == 0 {
		return nil
	}
	buf := binary.AppendUvarint(make([]byte, 0, len(v)+10), uint64(n))
	for off := 0; off < len(v); {
		buf = append(buf, v[off:off+8]...)
		_, _, off = smallAt(v, off)
	}
	for off := 0; off < len(v); {
		_, b, next := smallAt(v, off)
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
		off = next
	}
	_, err := w.Write(buf)
	return err
}
