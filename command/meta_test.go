package command

import (
	"reflect"
	"strings"
	"testing"
)

// Every served command's table entry agrees with Redis's metadata: the
// same arity, the same write/readonly/blocking nature, and the same key
// positions.
func TestSpecsAgreeWithRedisMeta(t *testing.T) {
	for _, s := range All() {
		m := s.Meta
		if m == nil {
			t.Errorf("%s: no metadata", s.Name)
			continue
		}
		if !m.Served {
			t.Errorf("%s: not marked served", s.Name)
		}
		if s.Arity != m.Arity {
			t.Errorf("%s: arity %d, Redis %d", s.Name, s.Arity, m.Arity)
		}
		for _, f := range []struct {
			goblin Flags
			redis  CmdFlags
		}{{Write, CmdWrite}, {ReadOnly, CmdReadOnly}, {Blocking, CmdBlocking}} {
			if len(m.Subs) > 0 {
				break // a container's flags are its subcommands'
			}
			if (s.Flags&f.goblin != 0) != (m.Flags&f.redis != 0) {
				t.Errorf("%s: flags %v, Redis %v", s.Name, s.Flags.Names(), m.Flags.Names())
			}
		}
	}
}

// Categories are Redis's, implicit ones included (as COMMAND INFO on
// Redis 7.2 reports them).
func TestCategories(t *testing.T) {
	for name, want := range map[string]string{
		"zadd":          "write sortedset fast",
		"zrangestore":   "write sortedset slow",
		"bzpopmin":      "write sortedset fast blocking",
		"zrange":        "read sortedset slow",
		"flushall":      "keyspace write slow dangerous",
		"config":        "slow",
		"config|set":    "admin slow dangerous",
		"client|id":     "slow connection",
		"ping":          "fast connection",
		"multi":         "fast transaction",
		"auth":          "fast connection",
		"acl|whoami":    "slow",
		"acl|setuser":   "admin slow dangerous",
		"keys":          "keyspace read slow dangerous",
		"goblin|remove": "admin slow dangerous",
		"goblin|nodes":  "admin slow dangerous",
		"zcreate":       "write sortedset slow",
	} {
		m := LookupMeta(name)
		if m == nil {
			t.Errorf("%s: no metadata", name)
			continue
		}
		if got := strings.Join(m.Categories.Names(), " "); got != want {
			t.Errorf("%s: categories %q, want %q", name, got, want)
		}
	}
}

// argvOf splits a command line at spaces into its arguments.
func argvOf(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func TestKeyRefs(t *testing.T) {
	rd, wr := KeyRO|KeyAccess, KeyRW|KeyUpdate
	for _, tc := range []struct {
		cmd  string
		want []KeyRef
	}{
		{"zadd k 1 a", []KeyRef{{1, wr}}},
		{"zrange k 0 -1", []KeyRef{{1, rd}}},
		{"zrangestore d s 0 -1", []KeyRef{{1, KeyOW | KeyUpdate}, {2, rd}}},
		{"zunionstore d 2 a b weights 1 2", []KeyRef{{1, KeyOW | KeyUpdate}, {3, rd}, {4, rd}}},
		{"zunionstore d 0 a", nil},
		{"zunionstore d x a", nil},
		{"zunionstore d 5 a", nil},
		{"del a b c", []KeyRef{{1, KeyRM | KeyDelete}, {2, KeyRM | KeyDelete}, {3, KeyRM | KeyDelete}}},
		{"bzpopmin a b 0", []KeyRef{{1, KeyRW | KeyAccess | KeyDelete}, {2, KeyRW | KeyAccess | KeyDelete}}},
		{"bzmpop 0 2 a b min", []KeyRef{{3, KeyRW | KeyAccess | KeyDelete}, {4, KeyRW | KeyAccess | KeyDelete}}},
		{"rename a b", []KeyRef{{1, KeyRW | KeyAccess | KeyDelete}, {2, KeyOW | KeyUpdate}}},
		{"ping", nil},
	} {
		a := argvOf(tc.cmd)
		m := MetaFor(LookupMeta(string(a[0])), a)
		if got := m.KeyRefs(a, nil); (len(got) != 0 || len(tc.want) != 0) && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// Command IDs are dense, and a bitmap of 512 bits covers them (the ACL
// package's selectors use one).
func TestMetaIDs(t *testing.T) {
	if n := MetaCount(); n > 511 {
		t.Fatalf("%d commands: more than an ACL bitmap holds", n)
	}
	for i := 0; i < MetaCount(); i++ {
		if MetaByID(i).ID != i {
			t.Fatalf("ID %d holds %s with ID %d", i, MetaByID(i).Name, MetaByID(i).ID)
		}
	}
}

// Every served command and subcommand is documented: a summary and a
// since, and texts that agree with the facts: a complexity where one is
// stated, a text per history version, a replacement where one is named.
func TestServedCommandsDocumented(t *testing.T) {
	n := 0
	for _, m := range metaByID {
		if !m.Served {
			continue
		}
		n++
		d := m.Doc
		if d.Text.Summary == "" {
			t.Errorf("%s: no summary", m.Name)
		}
		if d.HasComplexity != (d.Text.Complexity != "") {
			t.Errorf("%s: states a complexity: %v; text %q", m.Name, d.HasComplexity, d.Text.Complexity)
		}
		if len(d.Text.History) != len(d.History) {
			t.Errorf("%s: %d history texts for %d versions", m.Name, len(d.Text.History), len(d.History))
		}
		if d.Replaced != (d.Text.ReplacedBy != "") {
			t.Errorf("%s: replaced %v, replacement %q", m.Name, d.Replaced, d.Text.ReplacedBy)
		}
		if d.Since == "" {
			t.Errorf("%s: no since", m.Name)
		}
	}
	for name := range goblinDocs {
		if m := LookupMeta(name); m == nil || !m.Served {
			t.Errorf("goblinDocs: %s is not a served command", name)
		}
	}
	if n < 140 { // every command and subcommand Goblin serves
		t.Fatalf("only %d served commands", n)
	}
}

// Redis's commands carry Redis 7.2's own texts (src/commands/zadd.json,
// zrangebyscore.json), which COMMAND DOCS answers.
func TestDocsAreRedis72s(t *testing.T) {
	for _, tc := range []struct {
		name string
		want DocText
	}{
		{"zadd", DocText{
			Summary:    "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.",
			Complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
			History:    []string{"Accepts multiple elements.", "Added the `XX`, `NX`, `CH` and `INCR` options.", "Added the `GT` and `LT` options."},
		}},
		{"zrangebyscore", DocText{
			Summary:    "Returns members in a sorted set within a range of scores.",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
			History:    []string{"Added the `WITHSCORES` modifier."},
			ReplacedBy: "`ZRANGE` with the `BYSCORE` argument",
		}},
	} {
		if got := LookupMeta(tc.name).Doc.Text; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
