package packed

import (
	"bytes"
	"math"
	"strconv"
	"testing"
)

// FuzzTree decodes a program from the fuzz input and runs it on a set and
// on the model: byte 0 picks the layout and capacities, then each op is
// three bytes (operation, member, score).
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 0, 3, 4, 1, 1, 0})
	f.Add([]byte{0x11, 0, 200, 9, 0, 201, 8, 0, 3, 7, 5, 1, 0, 4, 2, 2})
	f.Add(bytes.Repeat([]byte{0x22, 0, 7, 3, 0, 9, 1, 4, 0, 0}, 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		l := allLayouts[int(data[0]&0x0f)%len(allLayouts)]
		caps := [][2]int{{4, 4}, {5, 4}, {8, 8}, {64, 64}}[data[0]>>4&3]
		z := newWithCaps(l, caps[0], caps[1])
		md := newModel(l)
		scores := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, 0.1, math.Inf(1), math.Inf(-1), 1e300, 7}
		for data = data[1:]; len(data) >= 3; data = data[3:] {
			m := fuzzMember(md.layout, data[1])
			s := scores[int(data[2])%len(scores)] + float64(data[2]/10)
			switch op := data[0] % 8; {
			case op < 4:
				f := AddFlags(data[0]>>3) & (AddIncr | AddXX | AddGT)
				want, werr := md.add(m, s, f)
				got, err := z.Add([]byte(m), s, f)
				if err != werr || got.Added != want.Added || got.Changed != want.Changed || got.Skipped != want.Skipped {
					t.Fatalf("Add(%q, %v, %b) = %+v %v; model %+v %v", m, s, f, got, err, want, werr)
				}
			case op < 6:
				_, want := md.m[m]
				if z.Remove([]byte(m)) != want {
					t.Fatalf("Remove(%q) disagrees", m)
				}
				md.del(m)
			case op == 6:
				es := md.sorted()
				start, end := int(data[1]%16)-2, int(data[2]%16)
				z.RemoveRange(start, end)
				start, end = max(start, 0), min(end, len(es))
				if start < end {
					for _, e := range append([]entry(nil), es[start:end]...) {
						md.del(e.m)
					}
				}
			default:
				want := 0
				for _, e := range md.sorted() {
					if e.s < s {
						want++
					}
				}
				if got := z.ScoreRank(s, false); got != want {
					t.Fatalf("ScoreRank(%v) = %d, model %d", s, got, want)
				}
			}
			if err := z.Check(); err != nil {
				t.Fatal(err)
			}
		}
		compareAll(t, z, md)
		d, err := decode(encode(t, z))
		if err != nil {
			t.Fatal(err)
		}
		compareAll(t, d, md)
	})
}

func fuzzMember(l Layout, b byte) string {
	switch l.Member() {
	case MemberInt32, MemberInt64:
		switch b {
		case 255:
			return "2147483648"
		case 254:
			return "-9223372036854775808"
		case 253:
			return "007"
		}
		return strconv.Itoa(int(b) - 100)
	case MemberUUID:
		var u [16]byte
		u[0], u[15] = b>>4, b
		return string(appendUUID(nil, u))
	}
	return string(bytes.Repeat([]byte{b & 0xf0}, int(b&7)))
}

// FuzzDecode checks that arbitrary input never panics, and that whatever
// decodes is a valid set that re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, l := range allLayouts {
		z := NewWithCapacity(l, 4)
		for i, m := range []string{"1", "-5", "00000000-0000-0000-0000-000000000001", "x"} {
			z.Add([]byte(m), float64(i), 0)
		}
		f.Add(encode(f, z))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		z, err := decode(data)
		if err != nil {
			if err != ErrCorrupt {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
			return
		}
		if err := z.Check(); err != nil {
			t.Fatal(err)
		}
		b := encode(t, z)
		d, err := decode(b)
		if err != nil || !bytes.Equal(encode(t, d), b) {
			t.Fatalf("re-encoding does not round trip: %v", err)
		}
	})
}
