package packed

import (
	"math"
	"strconv"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

func TestParseCanonicalInt(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 42, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, 999999999999999999, -1000000000000000000} {
		s := strconv.FormatInt(v, 10)
		if got, ok := parseCanonicalInt([]byte(s)); !ok || got != v {
			t.Errorf("parse(%q) = %d %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "-", "+1", "01", "-0", "00", " 1", "1 ", "1a", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999", "1.0"} {
		if _, ok := parseCanonicalInt([]byte(s)); ok {
			t.Errorf("parse(%q) accepted", s)
		}
	}
}

// TestParseCanonicalIntAgainstStrconv compares parseCanonicalInt with
// strconv.ParseInt plus the canonical-form rule on random texts of every
// length up to 21, mostly digits, some with one byte changed to a byte
// next to the digit range, a sign or a space.
func TestParseCanonicalIntAgainstStrconv(t *testing.T) {
	r := testutil.Rand(t, 0)
	odd := []byte{'/', ':', '-', '+', ' ', 0, 0x80, 0xb0, 'a', 0x39 + 0x10, 0x30 - 0x10}
	for i := 0; i < 200000; i++ {
		b := make([]byte, r.IntN(22))
		for j := range b {
			b[j] = byte('0' + r.IntN(10))
		}
		if len(b) > 0 && r.IntN(4) == 0 {
			b[0] = '-'
		}
		if len(b) > 0 && r.IntN(3) == 0 {
			b[r.IntN(len(b))] = odd[r.IntN(len(odd))]
		}
		if len(b) > 0 && r.IntN(3) == 0 && b[0] == '0' {
			b[0] = '1'
		}
		checkParse(t, b)
	}
}

// checkParse compares parseCanonicalInt(b) with strconv.ParseInt and the
// canonical-form rule (the text is exactly the value's formatting).
func checkParse(t *testing.T, b []byte) {
	t.Helper()
	want, err := strconv.ParseInt(string(b), 10, 64)
	canonical := err == nil && strconv.FormatInt(want, 10) == string(b)
	got, ok := parseCanonicalInt(b)
	if ok != canonical || ok && got != want {
		t.Fatalf("parseCanonicalInt(%q) = %d %v, want %d %v", b, got, ok, want, canonical)
	}
}

func TestUUIDText(t *testing.T) {
	const s = "0123abcd-ef01-2345-6789-abcdef012345"
	u, ok := parseUUID([]byte(s))
	if !ok || string(appendUUID(nil, u)) != s || uuidOf(u).bytes() != u {
		t.Fatalf("UUID round trip: %v", ok)
	}
	for _, bad := range []string{"0123ABCD-ef01-2345-6789-abcdef012345", "0123abcd-ef01-2345-6789-abcdef01234", "0123abcdef01-2345-6789-abcdef0123456", "0123abcd-ef01-2345-6789-abcdef01234g"} {
		if _, ok := parseUUID([]byte(bad)); ok {
			t.Errorf("parseUUID(%q) accepted", bad)
		}
	}
}

// FuzzParseCanonicalInt checks parseCanonicalInt against strconv.ParseInt
// and the canonical-form rule on any bytes.
func FuzzParseCanonicalInt(f *testing.F) {
	for _, s := range []string{"0", "-1", "12345678", "123456789", "9223372036854775807", "-9223372036854775808", "0012", "-0", "1a", "+5", "99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParse)
}
