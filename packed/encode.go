package packed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
)

// ErrCorrupt is returned by Decode for data that is not a valid encoding.
var ErrCorrupt = errors.New("packed: corrupt encoding")

const encodingVersion = 1

// maxMemberLen bounds a decoded member (Redis's own limit is 512 MiB).
const maxMemberLen = 512 << 20

// EncodeTo writes the set to w: version, layout, count, then each member's
// text and score in rank order.
func (z *ZSet) EncodeTo(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var hdr [2 + 2*binary.MaxVarintLen64]byte
	hdr[0], hdr[1] = encodingVersion, byte(z.layout)
	n := 2 + binary.PutUvarint(hdr[2:], uint64(z.Len()))
	if _, err := bw.Write(hdr[:n]); err != nil {
		return err
	}
	var err error
	var scratch [binary.MaxVarintLen64 + 8]byte
	z.Range(0, z.Len(), false, func(m []byte, s float64) bool {
		k := binary.PutUvarint(scratch[:], uint64(len(m)))
		if _, err = bw.Write(scratch[:k]); err != nil {
			return false
		}
		if _, err = bw.Write(m); err != nil {
			return false
		}
		binary.LittleEndian.PutUint64(scratch[:8], math.Float64bits(s))
		_, err = bw.Write(scratch[:8])
		return err == nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
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
	if err != nil {
		return nil, ErrCorrupt
	}
	z := New(Layout(lb))
	var buf []byte
	var sb [8]byte
	for i := uint64(0); i < count; i++ {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > maxMemberLen {
			return nil, ErrCorrupt
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, ErrCorrupt
		}
		if _, err := io.ReadFull(r, sb[:]); err != nil {
			return nil, ErrCorrupt
		}
		s := math.Float64frombits(binary.LittleEndian.Uint64(sb[:]))
		if math.IsNaN(s) || z.CheckMember(buf) != nil {
			return nil, ErrCorrupt
		}
		if res, err := z.Add(buf, s, AddNX); err != nil || !res.Added {
			return nil, ErrCorrupt
		}
	}
	return z, nil
}
