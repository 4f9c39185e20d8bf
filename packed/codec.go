package packed

import (
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
	if len(d) <= 18 { // cannot overflow: the common case, one multiply-add per digit
		for _, c := range d {
			if c -= '0'; c > 9 {
				return 0, false
			}
			u = u*10 + uint64(c)
		}
	} else {
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
