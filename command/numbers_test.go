package command

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// decimalPrefix is what C's strtod reads of a decimal number: spaces, a
// sign, digits with an optional fraction, and an exponent only when it
// has digits.
var decimalPrefix = regexp.MustCompile(`^[ \t\n\v\f\r]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)

// TestStrtodDecimals: strtod reads a decimal number's longest prefix and
// gives ParseFloat's value of it, whether it is an integer (read without
// ParseFloat up to maxExactDigits digits) or not.
func TestStrtodDecimals(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	inputs := []string{
		"0", "-0", "+0", "7", "-7", "000000012345", "999999999999999", "9999999999999999",
		"123456789012345", "1234567890123456", "9007199254740993", "12e", "12e+", "12e5", "12E-3",
		"12.", "12.5", "-.5", " 42", "\t-42x", "42 ", "1e308", "1e309", "00000000000000000001",
		"4503599627370497", "123abc", "1.0e1", "+", "-", "",
	}
	for range 20000 {
		var b strings.Builder
		if r.IntN(8) == 0 {
			b.WriteByte(' ')
		}
		b.WriteString([]string{"", "-", "+"}[r.IntN(3)])
		for range 1 + r.IntN(20) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		b.WriteString([]string{"", "", "", ".", ".25", "e", "e3", "E-2", "x", " ", "e+"}[r.IntN(11)])
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		v, n, erange := strtod([]byte(in))
		m := decimalPrefix.FindString(in)
		if n != len(m) {
			t.Fatalf("strtod(%q) read %d bytes, want %d (%q)", in, n, len(m), m)
		}
		if m == "" {
			continue
		}
		want, err := strconv.ParseFloat(strings.TrimLeft(m, " \t\n\v\f\r"), 64)
		if math.Float64bits(v) != math.Float64bits(want) {
			t.Fatalf("strtod(%q) = %v, want %v", in, v, want)
		}
		if erange != (err != nil) {
			t.Fatalf("strtod(%q): erange %v, ParseFloat's error %v", in, erange, err)
		}
	}
}

// BenchmarkParseFloat: a score as clients send it, an integer and a
// fraction.
func BenchmarkParseFloat(b *testing.B) {
	for _, in := range []string{"000000012345", "1733481234", "3.25"} {
		b.Run(in, func(b *testing.B) {
			text := []byte(in)
			for range b.N {
				if _, ok := parseFloat(text); !ok {
					b.Fatal(in)
				}
			}
		})
	}
}
