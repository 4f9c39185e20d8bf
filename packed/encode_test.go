package packed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

func encode(t testing.TB, z *ZSet) []byte {
	var buf bytes.Buffer
	if err := z.EncodeTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode(b []byte) (*ZSet, error) { return Decode(bufio.NewReader(bytes.NewReader(b))) }

// randomSet builds a set of n random members with a random layout's rules.
func randomSet(r *rand.Rand, l Layout, leafCap, n int) *ZSet {
	z := NewWithCapacity(l, leafCap)
	g := newGen(r, l, 4*n+10)
	for z.Len() < n {
		g.layout = z.Layout()
		z.Add([]byte(g.member()), g.score(), 0)
	}
	return z
}

// TestDecodeNegativeZeroInt32Float32 decodes an INT32/FLOAT32 encoding
// holding -0, as sets stored -0 before their leaves held order keys: the
// set widens to INT32/FLOAT64 and keeps -0 exactly.
func TestDecodeNegativeZeroInt32Float32(t *testing.T) {
	b := []byte{encodingVersion, byte(Int32Float32), 3, 3}
	for _, s := range []float32{-1, float32(math.Copysign(0, -1)), 0} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	for _, m := range []int32{9, 3, 5} {
		b = binary.LittleEndian.AppendUint32(b, uint32(m))
	}
	z, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := z.Check(); err != nil {
		t.Fatal(err)
	}
	if z.Layout() != Int32Float64 {
		t.Fatalf("layout %v, want int32:float64", z.Layout())
	}
	for m, want := range map[string]float64{"9": -1, "3": math.Copysign(0, -1), "5": 0} {
		if s, ok := z.Score([]byte(m)); !ok || math.Float64bits(s) != math.Float64bits(want) {
			t.Errorf("score of %s = %v %v, want %v", m, s, ok, want)
		}
	}
	if got := memberList(z); len(got) != 3 || got[0] != "9" || got[1] != "3" || got[2] != "5" {
		t.Errorf("order %v", got)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 1))
	for _, l := range allLayouts {
		for _, n := range []int{0, 1, 7, 600, 3000} {
			z := randomSet(r, l, 4+r.IntN(600), n)
			b := encode(t, z)
			// Two encodings back to back decode one after the other.
			br := bufio.NewReader(bytes.NewReader(append(b, b...)))
			for range 2 {
				d, err := Decode(br)
				if err != nil {
					t.Fatalf("%v n=%d: %v", l, n, err)
				}
				if err := d.Check(); err != nil {
					t.Fatal(err)
				}
				if d.Layout() != z.Layout() || !sameSets(d, z) {
					t.Fatalf("%v n=%d: round trip differs", l, n)
				}
			}
			if _, err := br.ReadByte(); err == nil {
				t.Fatal("Decode left bytes unread")
			}
		}
	}
}

func TestDecodeRejectsCorruption(t *testing.T) {
	r := rand.New(rand.NewPCG(testutil.Seed(t), 2))
	for _, l := range allLayouts {
		z := randomSet(r, l, 8, 40)
		b := encode(t, z)
		for i := range b {
			if _, err := decode(b[:i]); err != ErrCorrupt {
				t.Fatalf("%v truncated at %d: %v", l, i, err)
			}
		}
		for range 300 {
			c := bytes.Clone(b)
			c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
			if d, err := decode(c); err == nil {
				if err := d.Check(); err != nil {
					t.Fatalf("%v: corrupt input decoded to a broken set: %v", l, err)
				}
			}
		}
	}
	hdr := func(l Layout, n int) []byte { return binary.AppendUvarint([]byte{encodingVersion, byte(l)}, uint64(n)) }
	f64 := func(b []byte, s float64) []byte { return binary.LittleEndian.AppendUint64(b, math.Float64bits(s)) }
	i64 := func(b []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(v)) }
	for name, b := range map[string][]byte{
		"version":     {1, 0, 0},
		"layout":      {encodingVersion, 9, 0},
		"empty block": append(hdr(Int64Float64, 1), 0),
		"big block":   append(hdr(Int64Float64, 1), 2),
		"NaN":         i64(f64(append(hdr(Int64Float64, 1), 1), math.NaN()), 5),
		"order":       i64(i64(f64(f64(append(hdr(Int64Float64, 2), 2), 2), 1), 5), 6),
		"tie order":   i64(i64(f64(f64(append(hdr(Int64Float64, 2), 2), 1), 1), 6), 5),
		"duplicate":   i64(i64(f64(f64(append(hdr(Int64Float64, 2), 2), 1), 2), 5), 5),
		"dup by zero": i64(i64(f64(f64(append(hdr(Int64Float64, 2), 2), math.Copysign(0, -1)), 0), 5), 5),
		"huge member": binary.AppendUvarint(f64(append(hdr(Standard, 1), 1), 1), 1<<40),
		"long member": append(binary.AppendUvarint(f64(append(hdr(Standard, 1), 1), 1), 1<<24), "short"...),
		"huge count":  append(hdr(Int32Float32, 1<<39), 1),
	} {
		if _, err := decode(b); err != ErrCorrupt {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// sameSets reports whether two sets hold the same members with
// bit-identical scores, in the same order.
func sameSets(a, b *ZSet) bool {
	type e struct {
		m string
		s uint64
	}
	var x []e
	a.Range(0, a.Len(), false, func(m []byte, s float64) bool {
		x = append(x, e{string(m), math.Float64bits(s)})
		return true
	})
	i := 0
	ok := a.Len() == b.Len()
	b.Range(0, b.Len(), false, func(m []byte, s float64) bool {
		ok = ok && i < len(x) && x[i] == e{string(m), math.Float64bits(s)}
		i++
		return ok
	})
	return ok
}
