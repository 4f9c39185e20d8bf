package rdb

import (
	"math/rand/v2"
	"testing"
)

func TestCRC64Check(t *testing.T) {
	// The check value of CRC-64/Jones, which Redis's own crc64 test uses.
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
}

func TestCRC64Split(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	p := make([]byte, 1000)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	whole := CRC64(0, p)
	for range 50 {
		k := r.IntN(len(p) + 1)
		if got := CRC64(CRC64(0, p[:k]), p[k:]); got != whole {
			t.Fatalf("split at %d: %#x, whole %#x", k, got, whole)
		}
	}
	// Bytewise reference.
	var c uint64
	for _, b := range p {
		c = crcTables[0][byte(c)^b] ^ c>>8
	}
	if c != whole {
		t.Fatalf("bytewise %#x, sliced %#x", c, whole)
	}
}
