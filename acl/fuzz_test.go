package acl

import (
	"strings"
	"testing"
)

// FuzzSetUser: no rule makes SetUser panic, and a user it builds comes
// back the same from the state a snapshot keeps and from its description
// (as ACL SAVE then ACL LOAD would rebuild it).
func FuzzSetUser(f *testing.F) {
	for _, seed := range []string{
		"on >pw ~k* %R~r* &ch +@sortedset -zadd (~a +get) clearselectors",
		"+@all -@hash -@slow +hget -@hash",
		"-@all +select|0 +config|get +client -client|kill",
		"reset on nopass allkeys allchannels allcommands",
		`(~"a b" +get) ( ) %RW~* %R~ ~`,
		"#34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6 <x !y",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		u, err := SetUser(nil, "u", strings.Split(rules, " "))
		if err != nil {
			return
		}
		us, err := Restore([]UserState{u.state()})
		if err != nil {
			t.Fatalf("%q: restoring %v: %v", rules, u.state(), err)
		}
		if got := us.Get("u").Describe(); got != u.Describe() {
			t.Fatalf("%q: restored as %q, was %q", rules, got, u.Describe())
		}
		// Redis's descriptions do not always load back: a pattern after
		// %RW~* (described "~*", which means allkeys), quoting inside
		// selectors, control characters in first arguments.
		if strings.Contains(u.Describe(), "~* ~") || strings.Contains(u.Describe(), "~* %") ||
			strings.ContainsAny(rules, "()\"'\\\t\n\v\f\r\x00") {
			return
		}
		if _, _, err := ParseFile("f", []byte(u.Line())); err != nil {
			t.Fatalf("%q: its description %q does not load: %v", rules, u.Line(), err)
		}
	})
}

// FuzzParseFile: no file makes ParseFile panic.
func FuzzParseFile(f *testing.F) {
	f.Add("user default on nopass ~* &* +@all\nuser a on >x (~k +get)\n")
	f.Add("user\nusers x\n  user  y on\nuser z (~a\n")
	f.Fuzz(func(t *testing.T, data string) {
		ParseFile("f", []byte(data))
	})
}
