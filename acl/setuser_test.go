package acl

import (
	"errors"
	"strings"
	"testing"
)

// The descriptions Redis 7.2 prints (ACL LIST) after ACL SETUSER with these
// rules on a new user: Redis's compaction of command rules, key
// permissions, selectors, flags.
func TestSetUserDescriptions(t *testing.T) {
	for _, tc := range []struct{ rules, want string }{
		{"", "off sanitize-payload resetchannels -@all"},
		{"on >p1 >p2 <p1 ~a* %R~b %W~c %RW~d %wr~e &ch1 &ch2 +@sortedset -zadd +@hash",
			"on sanitize-payload #3946ca64ff78d93ca61090a437cbb6b3d2ca0d488f5f9ccf3059608368b27693 ~a* %R~b %W~c ~d ~e resetchannels &ch1 &ch2 -@all +@sortedset -zadd +@hash"},
		{"+@all -@hash -@slow +hget", "off sanitize-payload resetchannels +@all -@hash -@slow +hget"},
		{"+@all -@hash -@slow +hget -@hash", "off sanitize-payload resetchannels +@all -@slow +hget -@hash"},
		{"-@all +client|list +client|list +config|get +config +acl|list -acl", "off sanitize-payload resetchannels -@all +client|list +config -acl"},
		{"-@all +select|0 +select|0 +debug|segfault +debug", "off sanitize-payload resetchannels -@all +select|0 +debug"},
		{"-@all +config +config|get -config|set +config", "off sanitize-payload resetchannels -@all +config"},
		{"reset on nopass ~* &* +@all (~k* +get) (%R~r* +zrange resetchannels &x)",
			"on nopass sanitize-payload ~* &* +@all (~k* resetchannels -@all +get) (%R~r* resetchannels &x -@all +zrange)"},
		{"on (~a* +zadd) clearselectors", "on sanitize-payload resetchannels -@all"},
		{"+@all ~x resetkeys ~y allkeys", "off sanitize-payload ~* resetchannels +@all"},
		{"skip-sanitize-payload #34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6 nopass >x",
			"off skip-sanitize-payload #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 resetchannels -@all"},
		{"-@all +@HASH +@hash +@HaSh", "off sanitize-payload resetchannels -@all +@hash"},
		{"-@all +hget -hset +hset -hget", "off sanitize-payload resetchannels -@all +hset -hget"},
		{"-@all +@hash +@slow +@set +@set +@slow +@hash", "off sanitize-payload resetchannels -@all +@set +@slow +@hash"},
		{"-@all -@dangerous", "off sanitize-payload resetchannels -@all -@dangerous"},
		{"%R", "off sanitize-payload %R~ resetchannels -@all"},
		{"~", "off sanitize-payload ~ resetchannels -@all"},
		{"+@all -client|kill -@dangerous +config|get", "off sanitize-payload resetchannels +@all -client|kill -@dangerous +config|get"},
		{"allcommands nocommands +zadd allchannels resetchannels &a allkeys resetkeys %R~x %W~x", "off sanitize-payload ~x resetchannels &a -@all +zadd"},
		{"()", "off sanitize-payload resetchannels -@all (resetchannels -@all)"},
		{`(~"a)`, "off sanitize-payload resetchannels -@all (resetchannels -@all)"},
		{"(~a +get)", "off sanitize-payload resetchannels -@all (~a resetchannels -@all +get)"},
		{"( )", "off sanitize-payload resetchannels -@all (resetchannels -@all)"},
	} {
		u, err := SetUser(nil, "u", strings.Fields(tc.rules))
		if err != nil {
			t.Errorf("%q: %v", tc.rules, err)
			continue
		}
		if got := u.Describe(); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.rules, got, tc.want)
		}
		// The state a snapshot keeps rebuilds the same user.
		us, err := Restore([]UserState{u.state()})
		if err != nil {
			t.Errorf("%q: restore: %v", tc.rules, err)
		} else if got := us.Get("u").Describe(); got != tc.want {
			t.Errorf("%q: restored as %q", tc.rules, got)
		}
	}
}

// A selector spread over several arguments is one rule.
func TestSetUserMergesSelectors(t *testing.T) {
	u, err := SetUser(nil, "x", []string{"(~a", "+get)"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Describe(), "off sanitize-payload resetchannels -@all (~a resetchannels -@all +get)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Refused rules give Redis 7.2's texts, and change nothing.
func TestSetUserErrors(t *testing.T) {
	const unknown = "Unknown command or category name in ACL"
	for _, tc := range []struct {
		rules []string
		want  string
	}{
		{[]string{"+nosuchcmd"}, "Error in ACL SETUSER modifier '+nosuchcmd': " + unknown},
		{[]string{"-@nosuchcat"}, "Error in ACL SETUSER modifier '-@nosuchcat': " + unknown},
		{[]string{"+config|get|x"}, "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{[]string{"+config|asdf"}, "Error in ACL SETUSER modifier '+config|asdf': " + unknown},
		{[]string{"-config|asdf"}, "Error in ACL SETUSER modifier '-config|asdf': " + unknown},
		{[]string{"+get|key1|key2"}, "Error in ACL SETUSER modifier '+get|key1|key2': " + unknown},
		{[]string{"+debug|"}, "Error in ACL SETUSER modifier '+debug|': Syntax error"},
		{[]string{"allkeys", "~x"}, "Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
		{[]string{"#abc"}, "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{[]string{"<nope"}, "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist"},
		{[]string{"(~a", "+get"}, "Unmatched parenthesis in acl selector starting at '(~a'."},
		{[]string{"(~a on)"}, "Error in ACL SETUSER modifier '(~a on)': Syntax error"},
		{[]string{"%X~a"}, "Error in ACL SETUSER modifier '%X~a': Syntax error"},
		{[]string{"%~a"}, "Error in ACL SETUSER modifier '%~a': Syntax error"},
		{[]string{"foo"}, "Error in ACL SETUSER modifier 'foo': Syntax error"},
		{[]string{"+"}, "Error in ACL SETUSER modifier '+': " + unknown},
		{[]string{"+@"}, "Error in ACL SETUSER modifier '+@': " + unknown},
		{[]string{"-select|0"}, "Error in ACL SETUSER modifier '-select|0': " + unknown},
		{[]string{"~a", "b"}, "Error in ACL SETUSER modifier 'b': Syntax error"},
		{[]string{"~a b"}, "Error in ACL SETUSER modifier '~a b': Syntax error"},
		{[]string{"(+get)", "("}, "Unmatched parenthesis in acl selector starting at '('."},
		{[]string{`("~a b" +get)`}, `Error in ACL SETUSER modifier '("~a b" +get)': Syntax error`},
		{[]string{`(~a "")`}, `Error in ACL SETUSER modifier '(~a "")': Syntax error`},
		{[]string{"&*", "&x"}, "Error in ACL SETUSER modifier '&x': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"},
	} {
		base, _ := SetUser(nil, "u", []string{"on", "+zadd"})
		_, err := SetUser(base, "u", tc.rules)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.rules, err, tc.want)
		}
		if base.Describe() != "on sanitize-payload resetchannels -@all +zadd" {
			t.Errorf("%q changed the user: %q", tc.rules, base.Describe())
		}
	}
	var re *RuleError
	if _, err := SetUser(nil, "u", []string{"+nope"}); !errors.As(err, &re) || !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("rule error %v", err)
	}
}

func TestPasswords(t *testing.T) {
	u, _ := SetUser(nil, "u", []string{">passwd1"})
	if u.CheckPassword([]byte("passwd1")) {
		t.Error("a user that is off authenticated")
	}
	u, _ = SetUser(u, "u", []string{"on", "#34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6"})
	for pw, want := range map[string]bool{"passwd1": true, "passwd4": true, "passwd2": false, "": false} {
		if got := u.CheckPassword([]byte(pw)); got != want {
			t.Errorf("password %q: %v, want %v", pw, got, want)
		}
	}
	u, _ = SetUser(u, "u", []string{"<passwd1", "!34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6"})
	if u.CheckPassword([]byte("passwd1")) || u.CheckPassword([]byte("passwd4")) || len(u.Passwords()) != 0 {
		t.Errorf("removed passwords still work: %v", u.Passwords())
	}
	u, _ = SetUser(u, "u", []string{"nopass"})
	if !u.CheckPassword([]byte("anything")) {
		t.Error("nopass refused a password")
	}
	u, _ = SetUser(u, "u", []string{"resetpass"})
	if u.CheckPassword([]byte("anything")) || u.NoPass() {
		t.Error("resetpass left nopass")
	}
}

func TestHashRules(t *testing.T) {
	got := HashRules([]string{">passwd4", "<passwd4", "on", "~a"})
	want := []string{"#34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6",
		"!34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6", "on", "~a"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v", got)
	}
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string]string{
		`a b  c`:     "a|b|c",
		`"a b" c`:    "a b|c",
		`'a\'b' c`:   "a'b|c",
		`"\x41\n" x`: "A\n|x",
		`"a`:         "<nil>",
		`"a"b`:       "<nil>",
		"a\vb":       "a\vb",
		"a\x00b c":   "a",
		``:           "",
		`   `:        "",
	} {
		got := splitArgs(in)
		s := strings.Join(got, "|")
		if got == nil && in != "" && strings.TrimSpace(in) != "" {
			s = "<nil>"
		}
		if s != want {
			t.Errorf("%q: %q, want %q", in, s, want)
		}
	}
}
