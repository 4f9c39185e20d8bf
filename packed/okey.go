package packed

import (
	"math"
	"unsafe"
)

// Order keys: how INT32/FLOAT32 leaves store their entries.
//
// An INT32/FLOAT32 entry is 8 bytes, and its (score, member) order can be
// made the unsigned order of one uint64: the score's bits, made
// order-preserving (negative floats flipped whole, positive ones with the
// sign bit set), in the high half, and the member with its sign bit
// flipped in the low half. Such leaves keep one []uint64 instead of a
// member array and a score array (leaf.ents), so a search loads one word
// per probe and compares once, where the split arrays load a score and a
// member and compare three times, and a shift moves one array instead of
// two. A pair of leaf searches measured 26 ns against 42 (okey_test.go).
//
// Redis orders -0 and +0 as one score, ties broken by member, while their
// keys would differ; so the key of -0 is the key of +0 and the layout does
// not store -0: a -0 score widens the set to INT32/FLOAT64 (fits), which
// keeps it exactly. Counters and leaderboards do not produce -0 (a sum is
// -0 only when both its terms are).
//
// Branches of such trees keep each fence's order key too (branch.sepK), so
// descents search keys as well. The other layouts keep split arrays: their
// entries would carry padding (INT32/FLOAT64, INT64/FLOAT32, standard) or
// need wider keys.

// okeyLeaves reports whether leaves of this instantiation store order keys.
// Like kindOf, it is a constant in each instantiation.
func okeyLeaves[M member, S score]() bool {
	var m M
	var s S
	// INT32 members are the ones of size 4 and alignment 4 (kindOf).
	return unsafe.Sizeof(m) == 4 && unsafe.Alignof(m) == 4 && unsafe.Sizeof(s) == 4
}

// okey32 is the order key of (s, m).
func okey32(s float32, m int32) uint64 {
	b := math.Float32bits(s)
	if b == 1<<31 { // -0 orders as +0
		b = 0
	}
	b ^= uint32(int32(b)>>31) | 1<<31
	return uint64(b)<<32 | uint64(uint32(m)^1<<31)
}

// okeyOf is okey32 for the instantiation's types (okeyLeaves only).
func okeyOf[M member, S score](s S, m M) uint64 {
	return okey32(*(*float32)(unsafe.Pointer(&s)), *(*int32)(unsafe.Pointer(&m)))
}

// okeyScore returns the score of order key k (never -0).
func okeyScore[S score](k uint64) S {
	b := uint32(k >> 32)
	return S(math.Float32frombits(b ^ (^uint32(int32(b)>>31) | 1<<31))) // positive: flip the sign bit; negative: all bits
}

// okeyMember returns the member of order key k.
func okeyMember[M member](k uint64) M {
	m := int32(uint32(k) ^ 1<<31)
	return *(*M)(unsafe.Pointer(&m))
}

// okeyRescore returns order key k with its score replaced by s.
func okeyRescore[S score](k uint64, s S) uint64 {
	return okey32(*(*float32)(unsafe.Pointer(&s)), 0)&^(1<<32-1) | k&(1<<32-1)
}

// okeyBound2 is lowerBound for two order keys at once, each over its own
// run, in lockstep as pairBound2 does.
func okeyBound2(a []uint64, k1 uint64, b []uint64, k2 uint64) (int, int) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return lowerBound(a, k1), lowerBound(b, k2)
	}
	b1, b2 := 0, 0
	if n1 == n2 {
		n := n1
		for n > 3 {
			q := n >> 2
			c1 := b2u(a[b1+q] < k1) + b2u(a[b1+2*q] < k1) + b2u(a[b1+3*q] < k1)
			c2 := b2u(b[b2+q] < k2) + b2u(b[b2+2*q] < k2) + b2u(b[b2+3*q] < k2)
			b1 += q * int(c1)
			b2 += q * int(c2)
			n -= 3 * q
		}
		n1, n2 = n, n
	}
	for n1 > 3 || n2 > 3 {
		q1, q2 := n1>>2, n2>>2
		c1 := b2u(a[b1+q1] < k1) + b2u(a[b1+2*q1] < k1) + b2u(a[b1+3*q1] < k1)
		c2 := b2u(b[b2+q2] < k2) + b2u(b[b2+2*q2] < k2) + b2u(b[b2+3*q2] < k2)
		b1 += q1 * int(c1)
		b2 += q2 * int(c2)
		n1 -= 3 * q1
		n2 -= 3 * q2
	}
	for n1 > 1 || n2 > 1 {
		h1, h2 := n1>>1, n2>>1
		b1 += h1 & -int(b2u(a[b1+h1] < k1))
		b2 += h2 & -int(b2u(b[b2+h2] < k2))
		n1 -= h1
		n2 -= h2
	}
	return b1 + int(b2u(a[b1] < k1)), b2 + int(b2u(b[b2] < k2))
}
