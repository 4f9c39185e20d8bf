package packed

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// ErrMember is returned when a member cannot be held by a packed layout at
// all, even after widening (for example "abc" or "007" in an integer layout).
var ErrMember = errors.New("member is not valid for the key's packed layout")

// ErrNaN is returned when an increment would produce a NaN score.
var ErrNaN = errors.New("resulting score is not a number (NaN)")

// parseCanonicalInt parses s as a canonical decimal integer: optional '-',
// no leading zeros (except "0" itself), no '+', no "-0". ok is false for
// anything else or for values outside int64.
//
// Every operation on an integer layout parses its member, so up to 16
// digits are converted eight at a time (digits8) rather than one at a time:
// a 7-digit member takes about 30 instructions instead of 100.
func parseCanonicalInt(s []byte) (v int64, ok bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	neg := s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || (d[0] == '0' && (len(d) > 1 || neg)) {
		return 0, false
	}
	var u uint64
	switch n := len(d); {
	case n <= 8:
		if u, ok = digits8(d); !ok {
			return 0, false
		}
	case n <= 16:
		hi, ok1 := digits8(d[:n-8])
		lo, ok2 := digits8(d[n-8:])
		if !ok1 || !ok2 {
			return 0, false
		}
		u = hi*1e8 + lo
	default: // 17 to 20 digits: one at a time, watching for overflow
		for _, c := range d {
			if c < '0' || c > '9' {
				return 0, false
			}
			n := u*10 + uint64(c-'0')
			if n/10 != u { // overflow
				return 0, false
			}
			u = n
		}
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// digits8 converts 1 to 8 ASCII digits to their value, reporting false if
// any byte is not a digit. It works on all eight at once in a uint64, first
// character in the low byte: the text is loaded with two overlapping loads
// (never reading past d), padded in front with '0's to eight digits, checked
// byte-wise, and combined in three multiply-adds, pairs of digits into
// 2-digit values, pairs of those into 4-digit values, and those into one.
func digits8(d []byte) (uint64, bool) {
	const zeros, high = 0x3030303030303030, 0xf0f0f0f0f0f0f0f0
	n := uint(len(d))
	var x uint64
	switch { // (the shift counts are masked so that the compiler adds no checks)
	case n >= 4:
		x = uint64(binary.LittleEndian.Uint32(d)) | uint64(binary.LittleEndian.Uint32(d[n-4:]))<<((n-4)*8&63)
	case n >= 2:
		x = uint64(binary.LittleEndian.Uint16(d)) | uint64(binary.LittleEndian.Uint16(d[n-2:]))<<((n-2)*8&63)
	default:
		x = uint64(d[0])
	}
	pad := (8 - n) * 8 & 63
	x = x<<pad | zeros&(1<<pad-1)
	// Every byte is 0x30-0x39: its high nibble is 3, and adding 6 keeps it 3.
	if x&high != zeros || (x+0x0606060606060606)&high != zeros {
		return 0, false
	}
	x -= zeros
	x = x*10 + x>>8 // bytes 0, 2, 4, 6: the 2-digit values, most significant first
	x = ((x&0x000000ff000000ff)*(100+1000000<<32) + (x>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
	return x, true
}

// appendInt appends the canonical decimal text of v.
func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

const hexdigits = "0123456789abcdef"

// parseUUID parses the canonical lowercase 8-4-4-4-12 form.
func parseUUID(s []byte) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// appendUUID appends the canonical lowercase text of u.
func appendUUID(dst []byte, u [16]byte) []byte {
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexdigits[b>>4], hexdigits[b&15])
	}
	return dst
}
