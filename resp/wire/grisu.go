package wire

import (
	"math"
	"math/big"
	"math/bits"
)

// Redis 7.2 writes doubles that are not small integers with fpconv_dtoa,
// an implementation of Florian Loitsch's Grisu2. Grisu2's digits round-trip
// and are almost always the shortest that do, but not always: for a small
// fraction of doubles it emits one digit more than the shortest, or a
// different last digit. To reply with the very bytes Redis 7.2 sends, this
// file implements Grisu2 with the same choices fpconv makes: a table of 87
// cached powers of ten (every 8th from 10^-348) rounded to 64 bits, a
// 64x64 multiplication that keeps the high word rounded at bit 31 of the
// low one, target exponents in [-60, -32], and the same digit generation
// and last-digit weeding.

// diyFp is a 64-bit significand and a binary exponent: f * 2^e.
type diyFp struct {
	f uint64
	e int
}

const (
	gFirstPower = -348 // decimal exponent of the first cached power
	gStep       = 8    // decimal exponents between cached powers
	gNumPowers  = 87
	gExpMin     = -60
	gExpMax     = -32
	gHidden     = 1 << 52
)

// cachedPowers[i] is 10^(gFirstPower + i*gStep) as a normalized diyFp,
// its significand rounded to nearest.
var cachedPowers = func() [gNumPowers]diyFp {
	var t [gNumPowers]diyFp
	for i := range t {
		k := gFirstPower + i*gStep
		p := new(big.Float).SetPrec(2048).SetInt64(1)
		ten := new(big.Float).SetPrec(2048).SetInt64(10)
		for j := 0; j < abs(k); j++ {
			if k > 0 {
				p.Mul(p, ten)
			} else {
				p.Quo(p, ten)
			}
		}
		// p = mant * 2^exp with mant in [0.5, 1): scale to 64 bits.
		mant := new(big.Float).SetPrec(2048)
		exp := p.MantExp(mant)
		mant.SetMantExp(mant, 64)
		r := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Set(mant)
		u, _ := r.Uint64()
		if r.IsInt() && r.Cmp(new(big.Float).SetUint64(math.MaxUint64)) > 0 {
			u = 1 << 63
			exp++
		}
		t[i] = diyFp{u, exp - 64}
	}
	return t
}()

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// cachedPower returns the cached power c = 10^k that brings a value with
// binary exponent e into [gExpMin, gExpMax] once multiplied, starting from
// fpconv's estimate of it.
func cachedPower(e int) (diyFp, int) {
	const oneLogTen = 0.30102999566398114
	approx := int(float64(-(e + gNumPowers)) * oneLogTen)
	idx := (approx - gFirstPower) / gStep
	for {
		cur := e + cachedPowers[idx].e + 64
		switch {
		case cur < gExpMin:
			idx++
		case cur > gExpMax:
			idx--
		default:
			return cachedPowers[idx], gFirstPower + idx*gStep
		}
	}
}

// mul multiplies two diyFps, keeping the high 64 bits of the product
// rounded as fpconv rounds them.
func (a diyFp) mul(b diyFp) diyFp {
	const lo = 0xFFFFFFFF
	ahBl := (a.f >> 32) * (b.f & lo)
	alBh := (a.f & lo) * (b.f >> 32)
	alBl := (a.f & lo) * (b.f & lo)
	ahBh := (a.f >> 32) * (b.f >> 32)
	tmp := (ahBl & lo) + (alBh & lo) + (alBl >> 32)
	tmp += 1 << 31
	return diyFp{ahBh + (ahBl >> 32) + (alBh >> 32) + (tmp >> 32), a.e + b.e + 64}
}

// fpOf returns d (positive, finite, nonzero) as a diyFp, not normalized.
func fpOf(d float64) diyFp {
	b := math.Float64bits(d)
	frac := b & (gHidden - 1)
	e := int(b>>52) & 0x7FF
	if e != 0 {
		return diyFp{frac + gHidden, e - 1075}
	}
	return diyFp{frac, -1074}
}

func (w diyFp) normalized() diyFp {
	for w.f&gHidden == 0 {
		w.f <<= 1
		w.e--
	}
	return diyFp{w.f << 11, w.e - 11}
}

// boundaries returns the midpoints between w and its neighbours, the upper
// one normalized and the lower one at the same exponent.
func (w diyFp) boundaries() (lower, upper diyFp) {
	upper = diyFp{w.f<<1 + 1, w.e - 1}
	for upper.f&(gHidden<<1) == 0 {
		upper.f <<= 1
		upper.e--
	}
	upper.f <<= 10
	upper.e -= 10
	shift := 1
	if w.f == gHidden {
		shift = 2 // the lower neighbour is closer at a power of two
	}
	lower = diyFp{w.f<<uint(shift) - 1, w.e - shift}
	lower.f <<= uint(lower.e - upper.e)
	lower.e = upper.e
	return lower, upper
}

var pow10u64 = [...]uint64{1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 100, 10, 1}

// weed steps the last digit down while that brings the digits closer to
// the value w (at distance frac from the upper boundary) and stays inside
// the interval.
func weed(digits []byte, delta, rem, kappa, frac uint64) {
	for rem < frac && delta-rem >= kappa && (rem+kappa < frac || frac-rem > rem+kappa-frac) {
		digits[len(digits)-1]--
		rem += kappa
	}
}

// grisu2 returns the decimal digits of d (positive, finite, nonzero) and
// the exponent K with d ≈ digits × 10^K.
func grisu2(d float64, buf []byte) ([]byte, int) {
	w := fpOf(d)
	lower, upper := w.boundaries()
	w = w.normalized()
	c, k := cachedPower(upper.e)
	w, upper, lower = w.mul(c), upper.mul(c), lower.mul(c)
	lower.f++
	upper.f--
	K := -k

	wfrac := upper.f - w.f
	delta := upper.f - lower.f
	shift := uint(-upper.e)
	one := uint64(1) << shift
	part1 := upper.f >> shift
	part2 := upper.f & (one - 1)
	digits := buf[:0]
	kappa := 10
	for _, div := range pow10u64 {
		digit := part1 / div
		if digit != 0 || len(digits) > 0 {
			digits = append(digits, byte('0'+digit))
		}
		part1 -= digit * div
		kappa--
		if rem := part1<<shift + part2; rem <= delta {
			weed(digits, delta, rem, div<<shift, wfrac)
			return digits, K + kappa
		}
	}
	unit := uint64(10)
	for {
		part2 *= 10
		delta *= 10
		kappa--
		digit := part2 >> shift
		if digit != 0 || len(digits) > 0 {
			digits = append(digits, byte('0'+digit))
		}
		part2 &= one - 1
		if part2 < delta {
			weed(digits, delta, part2, one, wfrac*unit)
			return digits, K + kappa
		}
		hi, lo := bits.Mul64(unit, 10)
		if hi == 0 {
			unit = lo
		}
	}
}
