package rdb

import (
	"encoding/binary"
	"math"
)

// A ziplist (RDB before version 10 stored small sorted sets so): a 4-byte
// total size, a 4-byte offset of the last entry and a 2-byte count, all
// little-endian, the entries, and a 0xFF terminator. Each entry starts
// with the previous entry's size (one byte below 254, else 0xFE and four
// bytes), then an encoding: a string with a 6, 14 or 32-bit (big-endian)
// length, an integer of 8, 16, 24, 32 or 64 bits, or 0..12 in the
// encoding byte itself.

const zlHeader = 10

// walkZiplist calls fn for each entry of zl, as walkListpack does.
func walkZiplist(zl []byte, fn func(s []byte, v int64, isInt bool) error) (int, error) {
	if len(zl) < zlHeader+1 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xff {
		return 0, errf("ziplist header")
	}
	want := int(binary.LittleEndian.Uint16(zl[8:]))
	end := len(zl) - 1
	n, prev := 0, 0
	for p := zlHeader; p < end; n++ {
		start := p
		plen := int(zl[p])
		if plen == 0xfe {
			if p+5 > end {
				return 0, errf("ziplist entry truncated")
			}
			plen = int(binary.LittleEndian.Uint32(zl[p+1:]))
			p += 5
		} else {
			p++
		}
		if plen != prev {
			return 0, errf("ziplist previous length")
		}
		if p >= end {
			return 0, errf("ziplist entry truncated")
		}
		e := zl[p]
		var (
			hdr, size int
			v         int64
			isInt     = true
		)
		fixed := func(w int) bool { // a w-byte little-endian integer
			if p+1+w > end {
				return false
			}
			var u uint64
			for i := w - 1; i >= 0; i-- {
				u = u<<8 | uint64(zl[p+1+i])
			}
			v = int64(u<<(64-8*w)) >> (64 - 8*w)
			hdr = 1 + w
			return true
		}
		ok := true
		switch {
		case e>>6 == 0:
			hdr, size, isInt = 1, int(e&0x3f), false
		case e>>6 == 1:
			if p+2 > end {
				return 0, errf("ziplist entry truncated")
			}
			hdr, size, isInt = 2, int(e&0x3f)<<8|int(zl[p+1]), false
		case e == 0x80:
			if p+5 > end {
				return 0, errf("ziplist entry truncated")
			}
			l := binary.BigEndian.Uint32(zl[p+1:])
			if l > math.MaxInt32 {
				return 0, errf("ziplist string of %d bytes", l)
			}
			hdr, size, isInt = 5, int(l), false
		case e == 0xc0:
			ok = fixed(2)
		case e == 0xd0:
			ok = fixed(4)
		case e == 0xe0:
			ok = fixed(8)
		case e == 0xf0:
			ok = fixed(3)
		case e == 0xfe:
			ok = fixed(1)
		case e >= 0xf1 && e <= 0xfd:
			hdr, v = 1, int64(e&0x0f)-1
		default:
			return 0, errf("ziplist encoding %#x", e)
		}
		if !ok || hdr+size > end-p {
			return 0, errf("ziplist entry overruns")
		}
		if err := fn(zl[p+hdr:p+hdr+size], v, isInt); err != nil {
			return 0, err
		}
		p += hdr + size
		prev = p - start
	}
	if want != 0xffff && want != n {
		return 0, errf("ziplist counts %d entries, holds %d", want, n)
	}
	return n, nil
}
