package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

func randomSet(r *rand.Rand, n, maxLen int) *Members {
	m := &Members{}
	seen := map[string]bool{}
	tricky := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1e-300, -1e300, 0.1, 1 << 62, 1<<62 + 1024, -(1 << 62), 4.5e15 + 0.5, 1e20}
	for len(m.Member) < n {
		var b []byte
		switch r.IntN(4) {
		case 0:
			b = strconv.AppendInt(nil, r.Int64N(1<<40)-1<<39, 10)
		case 1:
			b = strconv.AppendInt(nil, int64(r.IntN(300)-150), 10)
		default:
			b = make([]byte, r.IntN(maxLen+1))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			if r.IntN(2) == 0 { // compressible
				for i := range b {
					b[i] = "ab"[r.IntN(2)]
				}
			}
		}
		if seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		var s float64
		switch r.IntN(3) {
		case 0:
			s = tricky[r.IntN(len(tricky))]
		case 1:
			s = float64(r.IntN(1000) - 500)
		default:
			s = r.NormFloat64() * 1e6
		}
		m.Member = append(m.Member, b)
		m.Score = append(m.Score, s)
	}
	return m
}

func decodeAll(t *testing.T, p []byte) map[string]float64 {
	t.Helper()
	if err := VerifyPayload(p); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	n, err := DecodeZSet(p, func(m []byte, s float64) error {
		if _, dup := got[string(m)]; dup {
			t.Fatalf("member %q twice", m)
		}
		got[string(m)] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(got) {
		t.Fatalf("decoded %d members, counted %d", len(got), n)
	}
	return got
}

func sameScore(a, b float64) bool {
	if a == 0 && b == 0 {
		return true // a listpack stores -0 as the integer 0, as Redis does
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func TestPayloadRoundTrip(t *testing.T) {
	r := testutil.Rand(t, 0)
	for _, c := range []struct {
		n, maxLen int
		want      Type
	}{
		{1, 10, TypeZSetListpack}, {128, 64, TypeZSetListpack}, {129, 10, TypeZSet2},
		{5, 65, TypeZSet2}, {2000, 300, TypeZSet2}, {100, 5000, TypeZSet2},
	} {
		m := randomSet(r, c.n, c.maxLen)
		if c.maxLen > 64 {
			m.Member[0] = bytes.Repeat([]byte("x"), c.maxLen)
		} else if c.n <= 128 {
			for i := range m.Member {
				if len(m.Member[i]) > 64 {
					m.Member[i] = m.Member[i][:64]
				}
			}
		}
		p := AppendPayload(nil, m, nil)
		if Type(p[0]) != c.want {
			t.Fatalf("n=%d maxLen=%d: type %v, want %v", c.n, c.maxLen, Type(p[0]), c.want)
		}
		got := decodeAll(t, p)
		if len(got) != m.Len() {
			t.Fatalf("n=%d: %d members back", m.Len(), len(got))
		}
		for i, mem := range m.Member {
			s, ok := got[string(mem)]
			if !ok || !sameScore(s, m.Score[i]) {
				t.Fatalf("member %q: got %v %v, want %v", mem, s, ok, m.Score[i])
			}
		}
	}
}

// The listpack Redis 7.2 makes for ZADD k 1 a 2.5 b -0 c 7 100: checked
// against DUMP of a real server (e2e/dump_test.go compares more).
func TestListpackBytes(t *testing.T) {
	m := &Members{Member: [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("100")}, Score: []float64{1, 2.5, math.Copysign(0, -1), 7}}
	p := AppendPayload(nil, m, nil)
	want := []byte{
		17, 29, // ZSET_LISTPACK, string of 29 bytes
		29, 0, 0, 0, 8, 0, // total, count
		0x81, 'c', 2, 0, 1, // c, 0
		0x81, 'a', 2, 1, 1, // a, 1
		0x81, 'b', 2, 0x83, '2', '.', '5', 4, // b, "2.5"
		100, 1, 7, 1, // 100, 7
		0xff,
		11, 0,
	}
	if !bytes.Equal(p[:len(p)-8], want) {
		t.Fatalf("payload\n got %v\nwant %v", p[:len(p)-8], want)
	}
}

func TestVerifyPayload(t *testing.T) {
	m := &Members{Member: [][]byte{[]byte("a")}, Score: []float64{1}}
	p := AppendPayload(nil, m, nil)
	if err := VerifyPayload(p); err != nil {
		t.Fatal(err)
	}
	for i := range p {
		q := bytes.Clone(p)
		q[i] ^= 1
		if err := VerifyPayload(q); !errors.Is(err, ErrChecksum) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	if err := VerifyPayload(p[:9]); !errors.Is(err, ErrChecksum) {
		t.Fatal("short payload accepted")
	}
	// Version 12 refused even with a good checksum.
	q := bytes.Clone(p[:len(p)-10])
	q = binary.LittleEndian.AppendUint16(q, 12)
	q = binary.LittleEndian.AppendUint64(q, CRC64(0, q))
	if err := VerifyPayload(q); !errors.Is(err, ErrChecksum) {
		t.Fatal("version 12 accepted")
	}
}

// payload wraps a body in a valid footer.
func payload(body []byte) []byte {
	p := binary.LittleEndian.AppendUint16(bytes.Clone(body), Version)
	return binary.LittleEndian.AppendUint64(p, CRC64(0, p))
}

func TestDecodeBad(t *testing.T) {
	for name, body := range map[string][]byte{
		"string":       {0, 1, 'x'},
		"unknown type": {8, 0},
		"empty zset2":  {5, 0},
		"nan":          append([]byte{5, 1, 1, 'a'}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))...),
		"lying count":  {5, 0x80, 0xff, 0xff, 0xff, 0xff},
		"huge string":  {5, 1, 0x81, 0x7f, 0, 0, 0, 0, 0, 0, 0},
		"lying lzf":    {5, 1, 0xc3, 2, 0x80, 0x7f, 0, 0, 0, 0, 0},
		"bad listpack": {17, 3, 1, 2, 3},
		"odd listpack": {17, 9, 9, 0, 0, 0, 1, 0, 1, 1, 0xff},
		"empty lp":     {17, 7, 7, 0, 0, 0, 0, 0, 0xff},
		"truncated":    {5, 2, 1, 'a'},
	} {
		_, err := DecodeZSet(payload(body), func([]byte, float64) error { return nil })
		if err == nil {
			t.Errorf("%s: decoded", name)
			continue
		}
		if name == "string" {
			if !errors.Is(err, ErrNotZSet) {
				t.Errorf("%s: %v", name, err)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOldZSetTextScores(t *testing.T) {
	body := []byte{3, 3, 1, 'a', 3, '1', '.', '5', 1, 'b', 254, 1, 'c', 255}
	got := decodeAll(t, payload(body))
	if got["a"] != 1.5 || !math.IsInf(got["b"], 1) || !math.IsInf(got["c"], -1) {
		t.Fatalf("%v", got)
	}
}

func TestZiplist(t *testing.T) {
	// A ziplist of "a", 1, "bb", "2.5", 300 (int16), 12 (immediate).
	var e []byte
	prev := 0
	add := func(enc ...byte) {
		entry := append([]byte{byte(prev)}, enc...)
		e = append(e, entry...)
		prev = len(entry)
	}
	add(0x01, 'a')
	add(0xfe, 1)
	add(0x02, 'b', 'b')
	add(0x03, '2', '.', '5')
	add(0xc0, 0x2c, 0x01)
	add(0xfd)
	zl := binary.LittleEndian.AppendUint32(nil, uint32(10+len(e)+1))
	zl = binary.LittleEndian.AppendUint32(zl, 0)
	zl = binary.LittleEndian.AppendUint16(zl, 6)
	zl = append(append(zl, e...), 0xff)
	body := append([]byte{12}, appendString(nil, zl)...)
	got := decodeAll(t, payload(body))
	if len(got) != 3 || got["a"] != 1 || got["bb"] != 2.5 || got["300"] != 12 {
		t.Fatalf("%v", got)
	}
}

func TestLZF(t *testing.T) {
	r := testutil.Rand(t, 0)
	for range 300 {
		n := r.IntN(3000)
		in := make([]byte, n)
		alpha := 1 + r.IntN(255)
		for i := range in {
			in[i] = byte(r.IntN(alpha))
		}
		out, ok := lzfCompress(nil, in, len(in)+len(in)/16+64)
		if n == 0 {
			if ok {
				t.Fatal("empty input compressed")
			}
			continue
		}
		if !ok {
			t.Fatalf("%d bytes did not compress into their bound", n)
		}
		back, err := lzfDecompress(nil, out, n)
		if err != nil || !bytes.Equal(back, in) {
			t.Fatalf("round trip of %d bytes (alphabet %d): %v", n, alpha, err)
		}
		if _, ok := lzfCompress(nil, in, len(out)-1); ok {
			t.Fatalf("compressed into fewer bytes than it needs")
		}
	}
}

func TestString(t *testing.T) {
	for _, s := range []string{"", "0", "-0", "127", "-128", "128", "32767", "-32769", "2147483647", "2147483648", "007",
		"12345678901", "abc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ab" + string(make([]byte, 100))} {
		enc := appendString(nil, []byte(s))
		src := memSource(enc)
		var buf []byte
		got, err := src.str(&buf)
		if err != nil || string(got) != s || src.left() != 0 {
			t.Fatalf("%q: got %q, %v", s, got, err)
		}
		src = memSource(enc)
		if err := src.skipStr(); err != nil || src.left() != 0 {
			t.Fatalf("skip %q: %v", s, err)
		}
	}
}

// fileBuilder writes an RDB file for the reader's tests.
type fileBuilder struct{ b []byte }

func (f *fileBuilder) op(b ...byte)    { f.b = append(f.b, b...) }
func (f *fileBuilder) str(s string)    { f.b = appendString(f.b, []byte(s)) }
func (f *fileBuilder) length(n uint64) { f.b = appendLen(f.b, n) }
func (f *fileBuilder) zset(k string, z *Members) {
	f.str(k)
	f.b = appendZSet(f.b[:len(f.b)], z, nil)
}

func TestFileReader(t *testing.T) {
	var f fileBuilder
	f.op([]byte("REDIS0011")...)
	f.op(opAux)
	f.str("redis-ver")
	f.str("7.2.6")
	f.op(opFunction2)
	f.str("#!lua name=lib\n...")
	f.op(opSelectDB)
	f.length(0)
	f.op(opResizeDB)
	f.length(3)
	f.length(1)
	f.op(byte(TypeString))
	f.str("s")
	f.str("value")
	f.op(opExpireMS)
	f.b = binary.LittleEndian.AppendUint64(f.b, 1893456000000)
	f.op(byte(TypeZSetListpack)) // type, key, then the value without its type byte
	f.str("small")
	small := &Members{Member: [][]byte{[]byte("a"), []byte("b")}, Score: []float64{1, 2}}
	f.b = append(f.b, appendZSet(nil, small, nil)[1:]...)
	f.op(opSelectDB)
	f.length(3)
	f.op(opFreq, 5)
	f.op(byte(TypeList))
	f.str("l")
	f.length(2)
	f.str("x")
	f.str("y")
	f.op(byte(TypeZSet2))
	f.str("big")
	r := testutil.Rand(t, 0)
	big := randomSet(r, 500, 30)
	f.b = append(f.b, appendZSet(nil, big, nil)[1:]...)
	f.op(opModuleAux)
	f.length(12345)
	f.length(modUInt)
	f.length(2)
	f.length(modString)
	f.str("aux")
	f.length(modDouble)
	f.b = appendBinaryDouble(f.b, 1)
	f.length(modEOF)
	f.op(opEOF)
	f.b = binary.LittleEndian.AppendUint64(f.b, CRC64(0, f.b))

	rd, err := NewReader(bytes.NewReader(f.b))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		db   int
		name string
		t    Type
		exp  int64
		n    int
	}
	var keys []key
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		k := key{e.DB, string(e.Key), e.Type, e.ExpireAt, -1}
		if e.Type.IsZSet() && e.Key[0] == 'b' { // read "big", skip "small"
			got := map[string]float64{}
			k.n, err = rd.ZSet(func(m []byte, s float64) error { got[string(m)] = s; return nil })
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range big.Member {
				if !sameScore(got[string(m)], big.Score[i]) {
					t.Fatalf("big: %q = %v, want %v", m, got[string(m)], big.Score[i])
				}
			}
		}
		keys = append(keys, k)
	}
	want := []key{{0, "s", TypeString, 0, -1}, {0, "small", TypeZSetListpack, 1893456000000, -1}, {3, "l", TypeList, 0, -1}, {3, "big", TypeZSet2, 0, 500}}
	if len(keys) != len(want) {
		t.Fatalf("keys %v", keys)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("key %d: %+v, want %+v", i, keys[i], want[i])
		}
	}
	if aux := rd.Aux(); len(aux) != 1 || aux[0] != [2]string{"redis-ver", "7.2.6"} {
		t.Fatalf("aux %v", aux)
	}

	// A flipped byte fails the checksum (or the parse).
	bad := bytes.Clone(f.b)
	bad[len(bad)-20] ^= 0x40
	rd, _ = NewReader(bytes.NewReader(bad))
	for {
		_, err := rd.Next()
		if err == io.EOF {
			t.Fatal("corrupt file read to its end")
		}
		if err != nil {
			break
		}
	}
}

func TestMembersSorted(t *testing.T) {
	// Ties are ordered by member bytes in a listpack, whatever the source
	// order.
	m := &Members{Member: [][]byte{[]byte("9"), []byte("10"), []byte("b"), []byte("a")}, Score: []float64{1, 1, 1, 1}}
	p := AppendPayload(nil, m, nil)
	var order []string
	if _, err := DecodeZSet(p, func(mm []byte, _ float64) error { order = append(order, string(mm)); return nil }); err != nil {
		t.Fatal(err)
	}
	if !sort.StringsAreSorted(order) {
		t.Fatalf("order %v", order)
	}
}

// A lying length costs at most a chunk of memory, not what it claims.
func TestLyingLengthsBounded(t *testing.T) {
	var f fileBuilder
	f.op([]byte("REDIS0011")...)
	f.op(byte(TypeString))
	f.op(len32, 0x7f, 0xff, 0xff, 0xff) // a key of 2 GiB
	f.op([]byte("short")...)
	var zs fileBuilder
	zs.op([]byte("REDIS0011")...)
	zs.op(byte(TypeZSet2))
	zs.str("k")
	zs.op(len64, 0, 0, 0, 1, 0, 0, 0, 0) // 2^32 members
	zs.str("a")
	var before, after runtime.MemStats
	for _, data := range [][]byte{f.b, zs.b} {
		runtime.GC()
		runtime.ReadMemStats(&before)
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		e, err := rd.Next()
		if err == nil {
			_, err = rd.ZSet(func([]byte, float64) error { return nil })
			_ = e
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("lying length: %v", err)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
			t.Fatalf("a lying length allocated %d bytes", got)
		}
	}
	// In memory, the same lies fail before allocating anything large.
	allocs := testing.AllocsPerRun(10, func() {
		DecodeZSet(payload([]byte{5, len64, 0, 0, 0, 1, 0, 0, 0, 0, 1, 'a'}), func([]byte, float64) error { return nil })
	})
	if allocs > 10 {
		t.Fatalf("%v allocations for a lying count", allocs)
	}
}
