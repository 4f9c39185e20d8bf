package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"testing"
)

// FuzzPayload decodes arbitrary payload bodies (given a valid footer, so
// the decoder itself is exercised): never a panic, and every error is one
// of the package's.
func FuzzPayload(f *testing.F) {
	f.Add([]byte{17, 29, 29, 0, 0, 0, 8, 0, 0x81, 'c', 2, 0, 1, 0x81, 'a', 2, 1, 1, 0x81, 'b', 2, 0x83, '2', '.', '5', 4, 100, 1, 7, 1, 0xff})
	f.Add(append([]byte{5, 1, 1, 'a'}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1))...))
	f.Add([]byte{3, 1, 1, 'a', 3, '1', '.', '5'})
	f.Add([]byte{12, 0x14, 0x14, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 'a', 3, 0xf2, 0xff})
	big := &Members{}
	for i := range 200 {
		big.Member = append(big.Member, bytes.Repeat([]byte{byte(i)}, 30))
		big.Score = append(big.Score, float64(i)/3)
	}
	p := AppendPayload(nil, big, nil)
	f.Add(p[:len(p)-footerSize])
	f.Fuzz(func(t *testing.T, body []byte) {
		p := payload(body)
		if err := VerifyPayload(p); err != nil {
			t.Fatal(err)
		}
		_, err := DecodeZSet(p, func(m []byte, s float64) error {
			if math.IsNaN(s) {
				t.Fatal("NaN score passed on")
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotZSet) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// FuzzFile reads arbitrary RDB files to their end: never a panic.
func FuzzFile(f *testing.F) {
	var fb fileBuilder
	fb.op([]byte("REDIS0011")...)
	fb.op(opAux)
	fb.str("redis-ver")
	fb.str("7.2.6")
	fb.op(opSelectDB)
	fb.length(0)
	fb.op(byte(TypeString))
	fb.str("s")
	fb.str("v")
	fb.op(byte(TypeStreamListpack3))
	fb.str("st")
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.length(0)
	fb.op(byte(TypeZSetListpack))
	fb.str("z")
	fb.b = append(fb.b, appendZSet(nil, &Members{Member: [][]byte{[]byte("a")}, Score: []float64{1}}, nil)[1:]...)
	fb.op(opEOF)
	fb.b = binary.LittleEndian.AppendUint64(fb.b, 0)
	f.Add(fb.b)
	for _, name := range []string{"redis-7.0.15.rdb", "redis-7.2.6-nocompression.rdb"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 0; ; i++ {
			e, err := rd.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrUnsupported) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if e.Type.IsZSet() && i%2 == 0 {
				rd.ZSet(func([]byte, float64) error { return nil })
			}
		}
	})
}
