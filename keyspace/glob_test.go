package keyspace

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		nocase bool
		want   bool
	}{
		{"*", "", false, false}, // Redis special-cases a lone "*" in KEYS and SCAN
		{"*", "abc", false, true},
		{"a*", "abc", false, true},
		{"a*c", "abc", false, true},
		{"a*d", "abc", false, false},
		{"?", "a", false, true},
		{"?", "", false, false},
		{"a?c", "abc", false, true},
		{"[abc]", "b", false, true},
		{"[^abc]", "b", false, false},
		{"[a-c]x", "bx", false, true},
		{"[c-a]x", "bx", false, true},
		{"[a-c]", "d", false, false},
		{"\\*", "*", false, true},
		{"\\*", "a", false, false},
		{"h\\", "h\\", false, true},
		{"[\\]]", "]", false, true},
		{"ABC", "abc", true, true},
		{"ABC", "abc", false, false},
		{"[A-C]", "b", true, true},
		{"[abc", "a", false, true},
		{"[abc", "ab", false, false},
		{"a[", "a", false, false},
		{"**a", "ba", false, true},
		{"*a*b", "xaxxb", false, true},
		{"user:*", "user:42", false, true},
		{"user:*", "usr:42", false, false},
		// Range bounds compare as C's signed char: 0x80 and up sort below 0.
		{"[a-\xff]", "b", false, false},
		{"[a-\xff]", "A", false, true},
		{"[a-\xff]", "\x80", false, false},
		{"[\x00-\xff]", "a", false, false},
		{"[\x80-\x00]", "\x90", false, true},
		{"[\x80-\x00]", "a", false, false},
		// Redis's guard against abusive patterns: at most 1000 stars deep.
		{strings.Repeat("*a", 1000), strings.Repeat("a", 1000), false, true},
		{strings.Repeat("*a", 1001), strings.Repeat("a", 1001), false, false},
		{strings.Repeat("*?", 50000), strings.Repeat("x", 50000), false, false},
	}
	for _, c := range cases {
		if got := Match([]byte(c.pat), []byte(c.s), c.nocase); got != c.want {
			t.Errorf("Match(%q, %q, %v) = %v, want %v", c.pat, c.s, c.nocase, got, c.want)
		}
	}
}
