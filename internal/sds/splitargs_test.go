package sds

import (
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		line string
		want []string // nil with ok false: unbalanced quotes
		ok   bool
	}{
		{"", []string{}, true},
		{"   ", []string{}, true},
		{"PING", []string{"PING"}, true},
		{"  set  a   b ", []string{"set", "a", "b"}, true},
		{"a\tb", []string{"a", "b"}, true},
		{"a\vb", []string{"a\vb"}, true}, // \v ends no token, only skips between them
		{`"a b" c`, []string{"a b", "c"}, true},
		{`"\x41\x4a" "\n\r\t\b\a\z\\\""`, []string{"AJ", "\n\r\t\b\az\\\""}, true},
		{`"\x4" "\xzz"`, []string{"x4", "xzz"}, true},
		{`'a b' 'it\'s' 'x\n'`, []string{"a b", "it's", `x\n`}, true},
		{`ab"cd"`, []string{"abcd"}, true},
		{`"" ''`, []string{"", ""}, true},
		{`"abc"d`, nil, false},
		{`'abc'd`, nil, false},
		{`"abc`, nil, false},
		{`'abc`, nil, false},
		{"a\x00b c", []string{"a"}, true}, // a C string ends at NUL
	}
	for _, c := range cases {
		got, ok := SplitArgs([]byte(c.line))
		if ok != c.ok {
			t.Errorf("SplitArgs(%q) ok = %v, want %v", c.line, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		var s []string
		for _, a := range got {
			s = append(s, string(a))
		}
		if strings.Join(s, "|") != strings.Join(c.want, "|") || len(s) != len(c.want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", c.line, s, c.want)
		}
	}
}
