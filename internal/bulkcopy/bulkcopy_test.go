package bulkcopy

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestSameAsBuiltins: Copy, Append and Checksum give what copy, append
// and crc32.Update give, for sizes around and across Piece, into slices
// with and without room.
func TestSameAsBuiltins(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tab := crc32.MakeTable(crc32.Castagnoli)
	for _, n := range []int{0, 1, Piece - 1, Piece, Piece + 1, 3*Piece + 17} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		for _, dstLen := range []int{0, 5, n, n + 9} {
			a, b := make([]byte, dstLen), make([]byte, dstLen)
			if got, want := Copy(a, src), copy(b, src); got != want || !bytes.Equal(a, b) {
				t.Fatalf("Copy(%d into %d) = %d, want %d, bytes equal %v", n, dstLen, got, want, bytes.Equal(a, b))
			}
		}
		for _, room := range []int{0, n} {
			prefix := []byte("prefix")
			dst := append(make([]byte, 0, len(prefix)+room), prefix...)
			got := Append(dst, src)
			if want := append(append([]byte(nil), prefix...), src...); !bytes.Equal(got, want) {
				t.Fatalf("Append(%d, room %d) differs", n, room)
			}
			if room == n && len(got) > 0 && &got[0] != &dst[0] {
				t.Fatalf("Append(%d) with room reallocated", n)
			}
		}
		if got, want := Checksum(7, tab, src), crc32.Update(7, tab, src); got != want {
			t.Fatalf("Checksum(%d) = %x, want %x", n, got, want)
		}
	}
}
