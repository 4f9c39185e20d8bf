package e2e

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// Differential test of command metadata: COMMAND INFO, COMMAND DOCS,
// COMMAND GETKEYS, COMMAND GETKEYSANDFLAGS and COMMAND LIST FILTERBY for
// every command and subcommand Goblin serves, against Redis 7.2, in RESP2
// and RESP3. Replies are compared byte for byte, COMMAND DOCS's texts
// (summary, complexity, replaced_by, what each history version changed)
// included, except for:
//
//   - the order of subcommands, which Redis takes from a hash table, and
//     the subcommands Goblin does not serve, which it does not list;
//   - Goblin's own commands (ZCREATE, GOBLIN), which Redis does not have;
//   - COMMAND HELP, worded without Redis's name.
//
// The reference is $REDIS_SERVER; the test skips unless it is Redis 7.2:
//
//	REDIS_SERVER=/path/to/redis-7.2/src/redis-server go test ./e2e -run CommandMeta
func TestCommandMetaMatchesRedis72(t *testing.T) {
	r := startRedis72(t)
	g := StartGoblind(t, NodeOptions{})
	for _, proto := range []string{"2", "3"} {
		rc, gc := dialPair(t, r.Addr, g.Addr, proto)
		listReply, err := gc.do("COMMAND", "LIST")
		if err != nil {
			t.Fatal(err)
		}
		served := map[string]bool{}
		var names []string
		for _, e := range mustParse(listReply).elems {
			served[e.str] = true
			names = append(names, e.str)
		}
		if len(names) < 80 {
			t.Fatalf("COMMAND LIST gave %d names", len(names))
		}
		compared := 0
		for _, name := range names {
			if isGoblinOnly(name) {
				continue
			}
			for _, argv := range [][]string{{"COMMAND", "INFO", name}, {"COMMAND", "DOCS", name}} {
				want, got := doBoth(t, rc, gc, argv)
				w, gv := mustParse(want), mustParse(got)
				for _, v := range []*value{w, gv} {
					normalizeMeta(v, served, argv[1] == "DOCS")
				}
				if !bytes.Equal(w.bytes(), gv.bytes()) {
					t.Errorf("RESP%s %s:\nredis:  %q\ngoblin: %q", proto, strings.Join(argv, " "), w.bytes(), gv.bytes())
				}
				compared++
			}
		}
		t.Logf("RESP%s: compared COMMAND INFO and DOCS of %d commands and subcommands", proto, compared/2)

		// Commands without subcommands compare as they come, unnormalized.
		for _, argv := range [][]string{{"COMMAND", "DOCS", "zadd"}, {"COMMAND", "DOCS", "zrangebyscore"},
			{"COMMAND", "DOCS", "zadd", "nosuch", "zrevrangebylex"}} {
			want, got := doBoth(t, rc, gc, argv)
			if !bytes.Equal(want, got) {
				t.Errorf("RESP%s %s:\nredis:  %q\ngoblin: %q", proto, strings.Join(argv, " "), want, got)
			}
		}

		for _, argv := range getKeysCases {
			for _, sub := range []string{"GETKEYS", "GETKEYSANDFLAGS"} {
				full := append([]string{"COMMAND", sub}, strings.Fields(argv)...)
				want, got := doBoth(t, rc, gc, full)
				if !bytes.Equal(want, got) {
					t.Errorf("RESP%s %s:\nredis:  %q\ngoblin: %q", proto, strings.Join(full, " "), want, got)
				}
			}
		}
		for _, filter := range [][]string{{"ACLCAT", "sortedset"}, {"ACLCAT", "connection"}, {"ACLCAT", "nosuch"},
			{"PATTERN", "z*store"}, {"PATTERN", "CLIENT|*"}, {"MODULE", "x"}} {
			argv := append([]string{"COMMAND", "LIST", "FILTERBY"}, filter...)
			want, got := doBoth(t, rc, gc, argv)
			w, gv := mustParse(want), mustParse(got)
			keepServed(w, served)
			dropGoblinOnly(gv)
			w.sortElems()
			gv.sortElems()
			if !bytes.Equal(w.bytes(), gv.bytes()) {
				t.Errorf("RESP%s %s:\nredis:  %q\ngoblin: %q", proto, strings.Join(argv, " "), w.bytes(), gv.bytes())
			}
		}
		for _, argv := range [][]string{{"COMMAND", "LIST", "FILTERBY", "ACLCAT"}, {"COMMAND", "LIST", "BOGUS", "a", "b"},
			{"COMMAND", "INFO", "nosuch", "zadd"}, {"COMMAND", "DOCS", "nosuch"}, {"COMMAND", "NOPE"},
			{"COMMAND", "GETKEYS"}, {"COMMAND", "COUNT", "x"}} {
			want, got := doBoth(t, rc, gc, argv)
			w, gv := mustParse(want), mustParse(got)
			if !bytes.Equal(w.bytes(), gv.bytes()) {
				t.Errorf("RESP%s %s:\nredis:  %q\ngoblin: %q", proto, strings.Join(argv, " "), w.bytes(), gv.bytes())
			}
		}
	}
}

// startRedis72 starts $REDIS_SERVER, skipping the test unless it is
// Redis 7.2.
func startRedis72(t *testing.T) *testutil.Redis {
	t.Helper()
	r := testutil.StartRedis(t)
	if !strings.HasPrefix(r.Version, "7.2.") {
		t.Skipf("the reference is Redis %s; this test compares with 7.2 only", r.Version)
	}
	return r
}

// getKeysCases are full commands for COMMAND GETKEYS: fixed and movable
// keys, numkeys out of range, commands without keys, wrong arities.
var getKeysCases = []string{
	"zadd k 1 a", "zunionstore dst 2 a b WEIGHTS 1 2", "zinterstore dst 1 a", "zdiffstore dst 3 a b c",
	"zunion 2 a b", "zinter 1 a WITHSCORES", "zdiff 2 a b", "zintercard 2 a b LIMIT 1",
	"zmpop 2 a b MIN", "bzmpop 0 2 a b MAX COUNT 2", "bzpopmin a b 0", "zrangestore dst src 0 -1",
	"zunionstore dst 5 a b", "zunionstore dst x a", "zmpop 0 a MIN", "zmpop -1 a MIN",
	"del a b c", "exists a", "rename a b", "copy a b DB 1", "rename a", "ping", "echo x", "nosuch a b",
	"object encoding k", "memory usage k", "restore k 0 x", "touch a b", "unlink a",
	"client list", "config get x", "zcount k 0 1", "watch a b", "zscan k 0", "scan 0", "keys *", "expire k 10",
}

// dialPair opens a connection to each server in protocol proto.
func dialPair(t *testing.T, raddr, gaddr, proto string) (*dconn, *dconn) {
	t.Helper()
	var out [2]*dconn
	for i, addr := range []string{raddr, gaddr} {
		c, err := dialD(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.c.Close() })
		if _, err := c.do("HELLO", proto); err != nil {
			t.Fatal(err)
		}
		out[i] = c
	}
	return out[0], out[1]
}

func doBoth(t *testing.T, rc, gc *dconn, argv []string) (want, got []byte) {
	t.Helper()
	want, err := rc.do(argv...)
	if err != nil {
		t.Fatalf("redis %v: %v", argv, err)
	}
	got, err = gc.do(argv...)
	if err != nil {
		t.Fatalf("goblin %v: %v", argv, err)
	}
	return want, got
}

func isGoblinOnly(name string) bool {
	return name == "zcreate" || name == "goblin" || strings.HasPrefix(name, "goblin|")
}

// normalizeMeta rewrites a COMMAND INFO or DOCS reply so that the two
// servers compare equal where they agree by design: subcommands filtered
// to the served ones and sorted.
func normalizeMeta(v *value, served map[string]bool, docs bool) {
	if !docs {
		keepServedInfo(v, served)
		return
	}
	// A map of one command name to its docs.
	for i := 1; i < len(v.elems); i += 2 {
		normalizeDocs(v.elems[i], served)
	}
}

// keepServedInfo filters and sorts the subcommands of each COMMAND INFO
// entry in v (an array of entries).
func keepServedInfo(v *value, served map[string]bool) {
	for _, e := range v.elems {
		if len(e.elems) != 10 {
			continue
		}
		subs := e.elems[9]
		var kept []*value
		for _, s := range subs.elems {
			if len(s.elems) > 0 && served[s.elems[0].str] {
				kept = append(kept, s)
			}
		}
		subs.elems = kept
		sort.Slice(subs.elems, func(i, j int) bool { return subs.elems[i].elems[0].str < subs.elems[j].elems[0].str })
	}
}

// normalizeDocs filters and sorts the subcommands map of one command's
// docs map.
func normalizeDocs(d *value, served map[string]bool) {
	for i := 0; i+1 < len(d.elems); i += 2 {
		if d.elems[i].str != "subcommands" {
			continue
		}
		val := d.elems[i+1]
		type pair struct{ k, v *value }
		var pairs []pair
		for j := 0; j+1 < len(val.elems); j += 2 {
			if served[val.elems[j].str] {
				normalizeDocs(val.elems[j+1], served)
				pairs = append(pairs, pair{val.elems[j], val.elems[j+1]})
			}
		}
		sort.Slice(pairs, func(a, b int) bool { return pairs[a].k.str < pairs[b].k.str })
		val.elems = val.elems[:0]
		for _, p := range pairs {
			val.elems = append(val.elems, p.k, p.v)
		}
	}
}

// dropGoblinOnly removes Goblin's own commands from an array of names.
func dropGoblinOnly(v *value) {
	var kept []*value
	for _, e := range v.elems {
		if !isGoblinOnly(e.str) {
			kept = append(kept, e)
		}
	}
	v.elems = kept
}

// keepServed filters an array of names to the served ones.
func keepServed(v *value, served map[string]bool) {
	var kept []*value
	for _, e := range v.elems {
		if served[e.str] {
			kept = append(kept, e)
		}
	}
	v.elems = kept
}
