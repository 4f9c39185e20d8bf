package command

import (
	"math"
	"strconv"

	"github.com/goblindb/goblin/resp/wire"
)

// This file reproduces how Redis reads and writes numbers: string2ll for
// integers, strtod (as glibc implements it) for floats, and the two double
// formats Redis has used in replies.

// parseInt is Redis's string2ll: optional '-', no '+', no leading zeros, no
// spaces, "-0" refused, within int64.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) >= 21 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	p := b
	if p[0] == '-' {
		neg = true
		p = p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// strtod parses the longest prefix of b that C's strtod accepts and returns
// the value, the number of bytes consumed (0: no conversion), and whether
// the result overflowed or underflowed (strtod's ERANGE).
func strtod(b []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	rest := b[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return math.Inf(int(sign)), i + 8, false
	case hasPrefixFold(rest, "inf"):
		return math.Inf(int(sign)), i + 3, false
	case hasPrefixFold(rest, "nan"):
		j := i + 3
		if j < len(b) && b[j] == '(' {
			k := j + 1
			for k < len(b) && (isHex(b[k]) || b[k] == '_' || (b[k] >= 'g' && b[k] <= 'z') || (b[k] >= 'G' && b[k] <= 'Z')) {
				k++
			}
			if k < len(b) && b[k] == ')' {
				j = k + 1
			}
		}
		return math.NaN(), j, false
	}
	if len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		if h, hn, ok := parseHexFloat(rest[2:]); ok {
			// ERANGE as glibc's: overflow, underflow to zero of a
			// nonzero mantissa, or a subnormal result.
			er := math.IsInf(h, 0) || (h == 0 && hexMantissaNonzero(rest[2:2+hn])) ||
				(h != 0 && math.Abs(h) < 0x1p-1022)
			return sign * h, i + 2 + hn, er
		}
		// "0x" without hex digits: strtod reads the "0".
		return sign * 0, i + 1, false
	}
	j := i
	digits, nonzero := 0, false
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		nonzero = nonzero || b[j] != '0'
		j++
		digits++
	}
	if digits > 0 && digits <= maxExactDigits && (j == len(b) || b[j] != '.') && exponentLen(b[j:]) == 0 {
		return sign * float64(digitsValue(b[i:j])), j, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			nonzero = nonzero || b[j] != '0'
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	j += exponentLen(b[j:])
	f, err := strconv.ParseFloat(string(b[start:j]), 64)
	if err != nil && !math.IsInf(f, 0) {
		// Exponents beyond what ParseFloat takes: decide by the sign of
		// the exponent.
		f = 0
		if e := b[start:j]; hasHugeExponent(e) {
			f = math.Inf(int(sign))
		}
		return f, j, true
	}
	if math.IsInf(f, 0) {
		return f, j, true
	}
	if f == 0 && nonzero {
		return f, j, true
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 {
		return f, j, true // subnormal: glibc reports ERANGE too
	}
	return f, j, false
}

// maxExactDigits is how many decimal digits an integer may have for its
// value to be exact in a float64 (below 2^53), so that reading it as an
// integer gives the double strtod gives: the common score, read without
// ParseFloat.
const maxExactDigits = 15

// exponentLen is how many bytes of b strtod reads as an exponent after a
// number's digits: e or E, an optional sign and digits; 0 without digits.
func exponentLen(b []byte) int {
	if len(b) == 0 || b[0] != 'e' && b[0] != 'E' {
		return 0
	}
	k := 1
	if k < len(b) && (b[k] == '+' || b[k] == '-') {
		k++
	}
	digits := k
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	if k == digits {
		return 0
	}
	return k
}

// digitsValue is the value of a run of at most maxExactDigits digits.
func digitsValue(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v*10 + uint64(c-'0')
	}
	return v
}

// hasHugeExponent reports whether a decimal float text has a positive
// exponent (used only when ParseFloat rejected an extreme exponent).
func hasHugeExponent(b []byte) bool {
	for i, c := range b {
		if c == 'e' || c == 'E' {
			return i+1 < len(b) && b[i+1] != '-'
		}
	}
	return false
}

// hexMantissaNonzero reports whether a hex float's digits, up to its p
// exponent, hold a nonzero digit.
func hexMantissaNonzero(b []byte) bool {
	for _, c := range b {
		if c == 'p' || c == 'P' {
			break
		}
		if isHex(c) && c != '0' {
			return true
		}
	}
	return false
}

// parseHexFloat parses the part after "0x": hex digits, optional '.',
// hex digits, optional p exponent. ok is false when there is no hex digit.
func parseHexFloat(b []byte) (float64, int, bool) {
	j, digits := 0, 0
	for j < len(b) && isHex(b[j]) {
		j++
		digits++
	}
	if j < len(b) && b[j] == '.' {
		k := j + 1
		for k < len(b) && isHex(b[k]) {
			k++
			digits++
		}
		if digits > 0 {
			j = k
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	mant := string(b[:j])
	exp := "p0"
	if j < len(b) && (b[j] == 'p' || b[j] == 'P') {
		k := j + 1
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			k++
		}
		if k < len(b) && b[k] >= '0' && b[k] <= '9' {
			for k < len(b) && b[k] >= '0' && b[k] <= '9' {
				k++
			}
			exp = "p" + string(b[j+1:k])
			j = k
		}
	}
	f, err := strconv.ParseFloat("0x"+mant+exp, 64)
	if err != nil && !math.IsInf(f, 0) {
		f = 0
	}
	return f, j, true
}

// parseFloat is Redis's string2d, used for scores and increments: the
// whole argument must be a number, with no leading space, not NaN, and not
// overflowing or underflowing to zero.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	v, n, erange := strtod(b)
	if n != len(b) || math.IsNaN(v) {
		return 0, false
	}
	if erange && (math.IsInf(v, 0) || v == 0) {
		return 0, false
	}
	return v, true
}

// parseRangeFloat is how zslParseRange reads a score bound after its
// optional '(': strtod on the C string, anything but trailing garbage and
// NaN accepted (so "" is 0 and "1e999" is inf).
func parseRangeFloat(b []byte) (float64, bool) {
	b = cstr(b)
	v, n, _ := strtod(b)
	if n != len(b) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// DoubleFormat selects how replies write doubles (wire.DoubleFormat).
type DoubleFormat = wire.DoubleFormat

// The double formats: Redis 7.2's shortest round-trip text, and Redis
// 7.0's "%.17g".
const (
	Double72 = wire.Double72
	Double70 = wire.Double70
)

// appendDouble appends f formatted as Redis formats a double reply.
func appendDouble(dst []byte, f float64, format DoubleFormat) []byte {
	return wire.AppendDouble(dst, f, format)
}

// ParseInt parses an integer argument exactly as Redis's string2ll does.
func ParseInt(b []byte) (int64, bool) { return parseInt(b) }
