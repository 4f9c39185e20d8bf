package command

import (
	"math"
	"math/big"
)

// Blocking commands take their timeout in seconds as a C long double
// (Redis's getTimeoutFromObjectOrReply over string2ld): strtold's syntax,
// an 80-bit float with a 64-bit mantissa and a much wider exponent range
// than a double, multiplied by 1000 and rounded up to milliseconds.

// Timeout errors, word for word.
var (
	ErrTimeoutFloat    = &Error{"ERR timeout is not a float or out of range"}
	ErrTimeoutInteger  = &Error{"ERR timeout is not an integer or out of range"}
	ErrTimeoutRange    = &Error{"ERR timeout is out of range"}
	ErrTimeoutNegative = &Error{"ERR timeout is negative"}
)

// Limits of the x87 extended format, as exponents of big.Float's
// mantissa-in-[0.5,1) form: values at or above 2^16384 overflow, values
// below the smallest subnormal 2^-16445 underflow to zero.
const (
	ldMaxExp = 16384
	ldMinExp = -16444
	ldPrec   = 64
	// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS: longer
	// arguments are refused before parsing.
	maxLongDoubleChars = 5 * 1024
)

// parseLongDouble is Redis's string2ld: the whole argument must be a
// number strtold accepts, without leading space, not NaN, and neither
// overflowing nor underflowing to zero. The value is rounded to a 64-bit
// mantissa, as an x87 long double holds it.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars || isCSpace(b[0]) {
		return nil, false
	}
	v, n, _ := strtod(b)
	if n != len(b) || math.IsNaN(v) {
		return nil, false
	}
	if math.IsInf(v, 0) && isInfText(b) {
		return new(big.Float).SetInf(v < 0), true
	}
	f, _, err := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Parse(string(b), 0)
	if err != nil {
		return nil, false
	}
	if f.Sign() == 0 {
		// Zero text is fine; a nonzero text that rounds to zero is an
		// underflow (but big.Float never rounds a nonzero value to zero,
		// so this is only "0", "0.0e5" and the like).
		return f, true
	}
	exp := f.MantExp(nil)
	if exp > ldMaxExp || exp < ldMinExp {
		return nil, false
	}
	return f, true
}

// isInfText reports whether a number text spells infinity rather than
// overflowing to it.
func isInfText(b []byte) bool {
	if b[0] == '+' || b[0] == '-' {
		b = b[1:]
	}
	return hasPrefixFold(b, "inf")
}

var llongMax = new(big.Float).SetInt64(math.MaxInt64)

// ParseTimeout reads a blocking command's timeout in seconds, as Redis
// does, and returns it in milliseconds; 0 means wait forever. now (Unix
// ms) bounds it: the deadline now+timeout must fit in an int64.
func ParseTimeout(b []byte, now int64) (int64, error) {
	f, ok := parseLongDouble(b)
	if !ok {
		return 0, ErrTimeoutFloat
	}
	ms := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Mul(f, big.NewFloat(1000))
	if ms.Cmp(llongMax) > 0 {
		return 0, ErrTimeoutRange
	}
	var tval int64
	if ms.IsInf() {
		tval = math.MinInt64 // (long long)ceill(-inf) on x86
	} else {
		i, acc := ms.Int64()
		if acc == big.Below && ms.Sign() > 0 {
			i++ // Int64 truncates toward zero; ceill rounds up
		}
		if i == math.MinInt64 || (acc != big.Exact && ms.Cmp(new(big.Float).SetInt64(math.MinInt64)) < 0) {
			i = math.MinInt64
		}
		tval = i
	}
	if tval < 0 {
		return 0, ErrTimeoutNegative
	}
	if tval > 0 && tval > math.MaxInt64-now {
		return 0, ErrTimeoutRange
	}
	return tval, nil
}

// ParseTimeoutMillis parses a timeout in whole milliseconds, as Redis's
// getTimeoutFromObjectOrReply does for UNIT_MILLISECONDS (WAIT, CLIENT
// PAUSE): a long long, not negative, and such that now (Unix ms) plus it
// does not overflow.
func ParseTimeoutMillis(b []byte, now int64) (int64, error) {
	ms, ok := parseInt(b)
	switch {
	case !ok:
		return 0, ErrTimeoutInteger
	case ms < 0:
		return 0, ErrTimeoutNegative
	case ms > math.MaxInt64-now:
		return 0, ErrTimeoutRange
	}
	return ms, nil
}
