package packed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
)

// ErrCorrupt is returned by Decode for data that is not a valid encoding.
var ErrCorrupt = errors.New("packed: corrupt encoding")

// The snapshot encoding, version 2:
//
//	version  u8 (2)
//	layout   u8
//	count    uvarint
//	blocks   one per leaf, in rank order, until count entries:
//	  k        uvarint, 1 <= k <= 65536
//	  scores   k × (f32 or f64, little-endian)
//	  members  k × member: INT32/INT64 little-endian, UUID its 16 bytes,
//	           standard a uvarint length and the bytes
//
// Scores come first so that a decoder can add each member as it reads it.
// Decode checks every length and bound, that entries are in strictly
// increasing (score, member) order with no member twice and no NaN, and
// rebuilds the set with a bulk load. It reads exactly the encoding, so
// encodings can be concatenated in one stream.
const encodingVersion = 2

// maxMemberLen bounds a decoded member (Redis's own limit is 512 MiB).
const maxMemberLen = 512 << 20

// maxBlock bounds a block's entry count.
const maxBlock = 1 << 16

// EncodeTo writes the set to w in the snapshot encoding.
func (z *ZSet) EncodeTo(w io.Writer) error {
	return encodeSet(w, z.layout, z.Len(), z.c.encode)
}

func (c *zcore[M, S, V]) encode(w *bufio.Writer) error {
	var err error
	var buf []byte
	c.walk(nil, func(l *leaf[M, S]) {
		if err == nil {
			err = encodeLeaf(w, l, &c.ar, &buf)
		}
	})
	return err
}

// encodeLeaf writes a leaf's blocks; ar holds standard members, and
// *bufp is scratch space.
func encodeLeaf[M member, S score](w *bufio.Writer, l *leaf[M, S], ar *arena, bufp *[]byte) error {
	buf := *bufp
	defer func() { *bufp = buf }()
	for at := 0; at < l.n(); {
		k := min(l.n()-at, maxBlock)
		buf = binary.AppendUvarint(buf[:0], uint64(k))
		for i := at; i < at+k; i++ {
			buf = appendScore(buf, l.score(i))
		}
		for i := at; i < at+k; i++ {
			m := l.key(i)
			if kindOf[M]() != MemberBytes {
				buf = appendPacked(buf, m)
				continue
			}
			b := ar.get(*asRef(&m))
			buf = binary.AppendUvarint(buf, uint64(len(b)))
			if len(buf)+len(b) > 1<<16 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
				if _, err := w.Write(b); err != nil {
					return err
				}
				continue
			}
			buf = append(buf, b...)
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		at += k
	}
	return nil
}

// Decode reads a set written by EncodeTo.
func Decode(r *bufio.Reader) (*ZSet, error) {
	v, err := r.ReadByte()
	if err != nil || v != encodingVersion {
		return nil, ErrCorrupt
	}
	lb, err := r.ReadByte()
	if err != nil || !Layout(lb).Valid() {
		return nil, ErrCorrupt
	}
	count, err := binary.ReadUvarint(r)
	if err != nil || count > 1<<40 {
		return nil, ErrCorrupt
	}
	if Layout(lb) == Standard && count <= smallMaxEntries {
		return decodeSmall(r, int(count))
	}
	c := newCore(Layout(lb), DefaultLeafCap, maxFanout)
	negZero, err := c.decode(r, int(count))
	if err != nil {
		return nil, ErrCorrupt
	}
	z := &ZSet{layout: Layout(lb), c: c}
	if len(negZero) > 0 {
		// Encodings made before INT32/FLOAT32 leaves held order keys may
		// hold -0 there; the layout now widens to keep it (okey.go).
		z.convert(z.layout.widenScore())
		for _, m := range negZero {
			z.c.remove(m)
			if _, err := z.c.add(m, math.Copysign(0, -1), 0); err != nil {
				return nil, ErrCorrupt
			}
		}
	}
	return z, nil
}

// decodeSmall reads a standard set of n entries, few enough for the small
// form (small.go), into it, or into the tree when a member is too long.
func decodeSmall(r *bufio.Reader, n int) (*ZSet, error) {
	ents, err := readStandard(r, n)
	if err != nil {
		return nil, ErrCorrupt
	}
	z := newSmallSet()
	err = z.c.load(n, ents.all)
	if err == errGrowSmall {
		z = &ZSet{layout: Standard, c: newCore(Standard, DefaultLeafCap, maxFanout)}
		err = z.c.load(n, ents.all)
	}
	if err != nil {
		return nil, ErrCorrupt
	}
	return z, nil
}

// standardEntries are entries of the standard layout, read whole: member
// i is data[ends[i-1]:ends[i]].
type standardEntries struct {
	scores []float64
	ends   []int
	data   []byte
}

func (e *standardEntries) all(yield func([]byte, float64) bool) {
	start := 0
	for i, end := range e.ends {
		if !yield(e.data[start:end], e.scores[i]) {
			return
		}
		start = end
	}
}

// readStandard reads n entries of the standard layout, checking lengths
// and bounds as decode does; order is left to the loader.
func readStandard(r *bufio.Reader, n int) (*standardEntries, error) {
	e := &standardEntries{scores: make([]float64, 0, min(n, smallMaxEntries)), ends: make([]int, 0, min(n, smallMaxEntries))}
	err := readBlocks(r, n, 0, func(s float64, m []byte) error {
		e.scores = append(e.scores, s)
		e.data = append(e.data, m...)
		e.ends = append(e.ends, len(e.data))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// readBlocks reads the encoding's n entries block by block and calls add
// with each score and member: mw bytes of a packed member, or a standard
// member's text (mw 0). The member is valid during the call only.
func readBlocks[S score](r *bufio.Reader, n, mw int, add func(s S, m []byte) error) error {
	sw := scoreWidth[S]()
	var scores []S
	var raw, mb []byte
	for left := n; left > 0; {
		k, err := binary.ReadUvarint(r)
		if err != nil || k == 0 || k > maxBlock || k > uint64(left) {
			return ErrCorrupt
		}
		if raw, err = readN(r, raw, int(k)*sw); err != nil {
			return err
		}
		scores = scores[:0]
		for i := range int(k) {
			scores = append(scores, getScore[S](raw[i*sw:]))
		}
		for _, s := range scores {
			ln := uint64(mw)
			if mw == 0 {
				if ln, err = binary.ReadUvarint(r); err != nil || ln > maxMemberLen {
					return ErrCorrupt
				}
			}
			if mb, err = readN(r, mb, int(ln)); err != nil {
				return err
			}
			if err := add(s, mb); err != nil {
				return err
			}
		}
		left -= int(k)
	}
	return nil
}

// decode bulk-loads n entries. Order-key leaves cannot hold -0: it is
// loaded as +0 and the member's text returned in negZero.
func (c *zcore[M, S, V]) decode(r *bufio.Reader, n int) (negZero [][]byte, err error) {
	b := c.newBuilder(n)
	mw := memberWidth[M]()
	err = readBlocks(r, n, mw, func(s S, m []byte) error {
		var p probe[M]
		if mw > 0 {
			p.m = getPacked[M](m)
		} else {
			p.b = m
		}
		if okeyLeaves[M, S]() && s == 0 && math.Signbit(float64(s)) {
			s = 0
			negZero = append(negZero, c.appendMember(nil, p.m))
		}
		return b.add(&p, s)
	})
	if err != nil {
		return nil, err
	}
	return negZero, b.finish()
}

// readN reads n bytes into buf, growing it only as data arrives, so a
// corrupt length cannot make Decode allocate more than the input holds
// (plus 64 KiB).
func readN(r io.Reader, buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), 1<<16)
		buf = slices.Grow(buf, k)
		if _, err := io.ReadFull(r, buf[len(buf):len(buf)+k]); err != nil {
			return nil, ErrCorrupt
		}
		buf = buf[:len(buf)+k]
	}
	return buf, nil
}
