package packed

import (
	"math"
	"strconv"
	"testing"
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
