package packed

import (
	"testing"
)

// Sequential IDs must spread over the table (the seed's identity hash put
// 100,000 sequential IDs in one bucket) and over the fingerprints.
func TestHashSpreadsSequentialIDs(t *testing.T) {
	for _, l := range []Layout{Int32Float32, Int64Float32} {
		const n, groups = 100000, 1 << 17
		seen := map[int]bool{}
		var fp [128]int
		for i := range n {
			var h uint64
			if l == Int32Float32 {
				h = hashProbe(&probe[int32]{m: int32(i)})
			} else {
				h = hashProbe(&probe[int64]{m: int64(i) << 40}) // differ only in high bits
			}
			seen[homeGroup(h, groups)] = true
			fp[h&0x7f]++
		}
		// Uniform hashing fills 1-e^(-n/groups) ≈ 53% of the groups.
		if len(seen) < n/2 {
			t.Errorf("%v: %d sequential IDs reach only %d groups", l, n, len(seen))
		}
		for b, k := range fp {
			if k < n/128/2 || k > n/128*2 {
				t.Errorf("%v: fingerprint %#x used %d times", l, b, k)
			}
		}
	}
}

func TestMix64Avalanche(t *testing.T) {
	for bit := range 64 {
		flips := 0
		for x := uint64(1); x < 2000; x++ {
			flips += popcount(mix64(x) ^ mix64(x^1<<bit))
		}
		if avg := float64(flips) / 1999; avg < 28 || avg > 36 {
			t.Errorf("flipping bit %d flips %.1f output bits on average", bit, avg)
		}
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
