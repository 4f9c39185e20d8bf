package wire

import (
	"math"
	"strconv"
)

// DoubleFormat selects how replies write doubles.
type DoubleFormat uint8

const (
	// Double72 is Redis 7.2's format: integers as integers, otherwise
	// the shortest text that reads back as the same double.
	Double72 DoubleFormat = iota
	// Double70 is Redis 7.0's format, C's "%.17g".
	Double70
)

// AppendDouble appends f formatted as Redis formats a double reply.
func AppendDouble(dst []byte, f float64, format DoubleFormat) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	if format == Double70 {
		return strconv.AppendFloat(dst, f, 'g', 17, 64)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	if f >= -(math.MaxInt64/2) && f <= math.MaxInt64/2 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return appendShortest(dst, f)
}

// appendShortest writes f's Grisu2 digits (see grisu.go) the way Redis
// 7.2's fpconv_dtoa lays them out: plain integers up to 7 padding zeros,
// plain decimals down to 6 leading zeros, scientific notation otherwise.
func appendShortest(dst []byte, f float64) []byte {
	var buf [24]byte
	digits, k := grisu2(math.Abs(f), buf[:])
	nd := len(digits)
	neg := f < 0
	if neg {
		dst = append(dst, '-')
	}
	exp := k + nd - 1
	if exp < 0 {
		exp = -exp
	}
	if k >= 0 && exp < nd+7 {
		dst = append(dst, digits[:nd]...)
		for i := 0; i < k; i++ {
			dst = append(dst, '0')
		}
		return dst
	}
	if k < 0 && (k > -7 || exp < 4) {
		offset := nd + k
		if offset <= 0 {
			dst = append(dst, '0', '.')
			for i := 0; i < -offset; i++ {
				dst = append(dst, '0')
			}
			return append(dst, digits[:nd]...)
		}
		dst = append(dst, digits[:offset]...)
		dst = append(dst, '.')
		return append(dst, digits[offset:nd]...)
	}
	limit := 18
	if neg {
		limit = 17
	}
	if nd > limit {
		nd = limit
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	if k+nd-1 < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}
