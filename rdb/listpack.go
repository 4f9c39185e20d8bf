package rdb

import (
	"encoding/binary"
	"math"
)

// A listpack: a 4-byte total size and a 2-byte count (65535: too many to
// count), both little-endian, the entries, and a 0xFF terminator. Each
// entry is an encoding byte (an integer of 7, 13, 16, 24, 32 or 64 bits, or
// a string with a 6, 12 or 32-bit length), its data, and its own size
// again in 1 to 5 bytes of 7 bits (the backlen), for walking backwards.

const lpHeader = 6

// walkListpack calls fn for each entry of lp, an integer (isInt, v) or a
// string (s, valid during the call), after checking the header, every
// entry's bounds and backlen, and the count. It returns the count.
func walkListpack(lp []byte, fn func(s []byte, v int64, isInt bool) error) (int, error) {
	if len(lp) < lpHeader+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xff {
		return 0, errf("listpack header")
	}
	want := int(binary.LittleEndian.Uint16(lp[4:]))
	end := len(lp) - 1
	n := 0
	for p := lpHeader; p < end; n++ {
		b := lp[p]
		var (
			hdr, size int // encoding bytes, data bytes
			v         int64
			isInt     = true
		)
		need := func(k int) bool { return p+k <= end }
		switch {
		case b&0x80 == 0:
			hdr, v = 1, int64(b&0x7f)
		case b&0xc0 == 0x80:
			hdr, size, isInt = 1, int(b&0x3f), false
		case b&0xe0 == 0xc0:
			if !need(2) {
				return 0, errf("listpack entry truncated")
			}
			u := int64(b&0x1f)<<8 | int64(lp[p+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			hdr, v = 2, u
		case b&0xf0 == 0xe0:
			if !need(2) {
				return 0, errf("listpack entry truncated")
			}
			hdr, size, isInt = 2, int(b&0x0f)<<8|int(lp[p+1]), false
		case b == 0xf0:
			if !need(5) {
				return 0, errf("listpack entry truncated")
			}
			l := binary.LittleEndian.Uint32(lp[p+1:])
			if l > math.MaxInt32 {
				return 0, errf("listpack string of %d bytes", l)
			}
			hdr, size, isInt = 5, int(l), false
		case b >= 0xf1 && b <= 0xf4:
			w := [...]int{2, 3, 4, 8}[b-0xf1]
			if !need(1 + w) {
				return 0, errf("listpack entry truncated")
			}
			var u uint64
			for i := w - 1; i >= 0; i-- {
				u = u<<8 | uint64(lp[p+1+i])
			}
			// Sign-extend from w bytes.
			v = int64(u<<(64-8*w)) >> (64 - 8*w)
			hdr = 1 + w
		default:
			return 0, errf("listpack encoding %#x", b)
		}
		enc := hdr + size
		bl := backlenSize(uint64(enc))
		if enc+bl > end-p {
			return 0, errf("listpack entry overruns")
		}
		var want [5]byte
		if string(appendBacklen(want[:0], uint64(enc))) != string(lp[p+enc:p+enc+bl]) {
			return 0, errf("listpack backlen")
		}
		if err := fn(lp[p+hdr:p+enc], v, isInt); err != nil {
			return 0, err
		}
		p += enc + bl
	}
	if want != 0xffff && want != n {
		return 0, errf("listpack counts %d entries, holds %d", want, n)
	}
	return n, nil
}

func backlenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// appendBacklen appends an entry's size as the entry's trailer: seven bits
// a byte, most significant first, every byte but the first marked by its
// top bit.
func appendBacklen(dst []byte, l uint64) []byte {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		b := byte(l >> (7 * i) & 127)
		if i != n-1 {
			b |= 128
		}
		dst = append(dst, b)
	}
	return dst
}

// listpackBuilder appends entries to a listpack being built in buf.
type listpackBuilder struct {
	buf []byte
	n   int
}

func newListpack(dst []byte) listpackBuilder {
	return listpackBuilder{buf: append(dst, 0, 0, 0, 0, 0, 0)}
}

// appendStr appends s as Redis's listpack does: as an integer when s is
// one in canonical form, otherwise as a string.
func (b *listpackBuilder) appendStr(s []byte) {
	if v, ok := parseCanonical(s); ok {
		b.appendInt(v)
		return
	}
	start := len(b.buf)
	switch l := len(s); {
	case l < 64:
		b.buf = append(b.buf, 0x80|byte(l))
	case l < 4096:
		b.buf = append(b.buf, 0xe0|byte(l>>8), byte(l))
	default:
		b.buf = append(b.buf, 0xf0)
		b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(l))
	}
	b.buf = append(b.buf, s...)
	b.buf = appendBacklen(b.buf, uint64(len(b.buf)-start))
	b.n++
}

func (b *listpackBuilder) appendInt(v int64) {
	start := len(b.buf)
	switch {
	case v >= 0 && v <= 127:
		b.buf = append(b.buf, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		b.buf = append(b.buf, 0xc0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		b.buf = append(b.buf, 0xf1)
		b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(v))
	case v >= -1<<23 && v < 1<<23:
		b.buf = append(b.buf, 0xf2, byte(v), byte(v>>8), byte(v>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		b.buf = append(b.buf, 0xf3)
		b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(v))
	default:
		b.buf = append(b.buf, 0xf4)
		b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(v))
	}
	b.buf = appendBacklen(b.buf, uint64(len(b.buf)-start))
	b.n++
}

// finish terminates the listpack that starts at buf[start] and fills in
// its header.
func (b *listpackBuilder) finish(start int) []byte {
	b.buf = append(b.buf, 0xff)
	binary.LittleEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start))
	binary.LittleEndian.PutUint16(b.buf[start+4:], uint16(min(b.n, 0xffff)))
	return b.buf
}
