package raftfsm

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/acl"
)

func aclEntry(c *ACLChange) []byte { return (&Entry{Op: OpACL, ACL: c}).Encode(nil) }

func setUser(name string, rules ...string) *ACLChange {
	return &ACLChange{Kind: ACLSetUser, Users: []ACLUser{{Name: name, Rules: rules}}}
}

func TestACLEntryRoundTrip(t *testing.T) {
	c := &ACLChange{Kind: ACLLoad, Node: "n1", Digest: "d", Replace: true,
		Users: []ACLUser{{Name: "alice", Rules: []string{"on", "#" + strings.Repeat("a", 64), "(~k +get)"}}, {Name: "bob"}},
		Init:  &ACLChange{Kind: ACLConfig, Node: "n1", Digest: "x", Users: []ACLUser{{Name: "default", Rules: []string{"resetpass"}}}}}
	e, err := Decode(aclEntry(c))
	if err != nil {
		t.Fatal(err)
	}
	if e.Op != OpACL || !reflect.DeepEqual(e.ACL.Users[0], c.Users[0]) || e.ACL.Users[1].Name != "bob" ||
		e.ACL.Node != "n1" || e.ACL.Digest != "d" || !e.ACL.Replace || e.ACL.Init.Digest != "x" || e.ACL.Init.Users[0].Rules[0] != "resetpass" {
		t.Fatalf("decoded %+v", e.ACL)
	}
	if err := ValidateACL(e.ACL); err != nil {
		t.Fatal(err)
	}
	// Every truncation is refused.
	b := aclEntry(c)
	for i := 2; i < len(b); i++ {
		if _, err := Decode(b[:i]); err == nil {
			t.Fatalf("truncated at %d: decoded", i)
		}
	}
}

func TestValidateACL(t *testing.T) {
	for _, c := range []*ACLChange{
		nil,
		{Kind: 0},
		{Kind: 9},
		{Kind: ACLSetUser},
		{Kind: ACLSetUser, Users: []ACLUser{{Name: "a"}, {Name: "b"}}},
		{Kind: ACLSetUser, Users: []ACLUser{{Name: "a b"}}},
		{Kind: ACLDelUser},
		{Kind: ACLSetUser, Users: []ACLUser{{Name: "a"}}, Init: &ACLChange{Kind: ACLLoad}},
	} {
		if err := ValidateACL(c); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// applyAll applies ACL changes as log entries 1, 2, ... and returns the
// replies.
func applyAll(f *FSM, changes ...*ACLChange) []string {
	var out []string
	for _, c := range changes {
		idx := f.Applied() + 1
		r := f.ApplyBatch([]*raft.Log{{Index: idx, Type: raft.LogCommand, Data: aclEntry(c)}})
		out = append(out, string(r[0].(Result).Reply))
	}
	return out
}

func TestApplyACL(t *testing.T) {
	f := New()
	if f.applier.ACLUsers() != nil {
		t.Fatal("a new state has users")
	}
	var dropped [][]string
	f.applier.OnACLChange(func(_ *acl.Users, d []string) { dropped = append(dropped, d) })
	got := applyAll(f,
		setUser("alice", "on", "#"+acl.HashPassword([]byte("pw")), "+@all", "~*"),
		setUser("alice", "+nosuch"),
		setUser("bob", "on", "nopass"),
		&ACLChange{Kind: ACLDelUser, Users: []ACLUser{{Name: "bob"}, {Name: "carol"}}},
		&ACLChange{Kind: ACLDelUser, Users: []ACLUser{{Name: "default"}}},
	)
	want := []string{"+OK\r\n",
		"-ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL\r\n",
		"+OK\r\n", ":1\r\n", "-ERR The 'default' user cannot be removed\r\n"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replies %q", got)
	}
	us := f.applier.ACLUsers()
	if !reflect.DeepEqual(us.Names(), []string{"alice", "default"}) || !us.Get("alice").CheckPassword([]byte("pw")) {
		t.Fatalf("users %v", us.Names())
	}
	// Redis's open default user, since no entry gave another.
	if !us.Default().NoPass() {
		t.Fatal("default user has a password")
	}
	if !reflect.DeepEqual(dropped, [][]string{nil, nil, {"bob"}}) {
		t.Fatalf("dropped %q", dropped)
	}
	// ACL LOAD replaces every user; connections of all but the default
	// user are closed, as Redis does.
	got = applyAll(f, &ACLChange{Kind: ACLLoad, Users: []ACLUser{{Name: "carol", Rules: []string{"on"}}}})
	if got[0] != "+OK\r\n" || !reflect.DeepEqual(f.applier.ACLUsers().Names(), []string{"carol", "default"}) ||
		!reflect.DeepEqual(dropped[len(dropped)-1], []string{"alice"}) {
		t.Fatalf("load: %q users %v dropped %v", got, f.applier.ACLUsers().Names(), dropped)
	}
}

// A node's configuration applies once per digest; a change proposed
// before any configuration reached the state builds on the proposer's.
func TestApplyACLConfig(t *testing.T) {
	f := New()
	pw := "#" + acl.HashPassword([]byte("secret"))
	cfg := func(digest string) *ACLChange {
		return &ACLChange{Kind: ACLConfig, Node: "n1", Digest: digest, Users: []ACLUser{{Name: "default", Rules: []string{"resetpass", pw}}}}
	}
	c := setUser("alice", "on")
	c.Init = cfg("d1")
	applyAll(f, c)
	us := f.applier.ACLUsers()
	if us.Default().NoPass() || !us.Default().CheckPassword([]byte("secret")) || us.Get("alice") == nil {
		t.Fatalf("users %v", us.Default().Describe())
	}
	if f.applier.ACLConfigDigest("n1") != "d1" {
		t.Fatalf("digest %q", f.applier.ACLConfigDigest("n1"))
	}
	// A change by SETUSER stays when the same configuration comes again.
	applyAll(f, setUser("default", "nopass"), cfg("d1"))
	if !f.applier.ACLUsers().Default().NoPass() {
		t.Fatal("the configuration applied twice")
	}
	// A new configuration applies.
	applyAll(f, cfg("d2"))
	if f.applier.ACLUsers().Default().NoPass() || f.applier.ACLConfigDigest("n1") != "d2" {
		t.Fatal("the new configuration did not apply")
	}
	// An Init is ignored once the state has users.
	c = setUser("bob", "on")
	c.Init = &ACLChange{Kind: ACLConfig, Node: "n2", Digest: "z", Replace: true}
	applyAll(f, c)
	if f.applier.ACLUsers().Get("alice") == nil || f.applier.ACLConfigDigest("n2") != "" {
		t.Fatal("an Init applied to a state with users")
	}
}

// A snapshot keeps the users and the configurations applied; restoring
// it replaces the users.
func TestSnapshotKeepsACL(t *testing.T) {
	src := New()
	c := setUser("alice", "on", ">pw", "(~k* %R~r* +zrange)", "~a", "+zadd")
	c.Users[0].Rules = acl.HashRules(c.Users[0].Rules)
	c.Init = &ACLChange{Kind: ACLConfig, Node: "n1", Digest: "d1"}
	applyAll(src, c)
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, snap.(*snapshot).st); err != nil {
		t.Fatal(err)
	}
	dst := New()
	applyAll(dst, setUser("zed", "on"))
	var dropped []string
	dst.applier.OnACLChange(func(_ *acl.Users, d []string) { dropped = d })
	if err := dst.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	a, b := src.applier.ACLUsers().Get("alice"), dst.applier.ACLUsers().Get("alice")
	if b == nil || a.Describe() != b.Describe() || !b.CheckPassword([]byte("pw")) {
		t.Fatalf("restored alice %v", b)
	}
	if dst.applier.ACLUsers().Get("zed") != nil || !reflect.DeepEqual(dropped, []string{"zed"}) {
		t.Fatalf("zed survived the restore, or was not dropped: %v", dropped)
	}
	if dst.applier.ACLConfigDigest("n1") != "d1" {
		t.Fatal("configuration digest lost")
	}
	// A snapshot without users restores to a state without users.
	empty := New()
	snap, _ = empty.Snapshot()
	buf.Reset()
	WriteSnapshot(&buf, snap.(*snapshot).st)
	if err := dst.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil || dst.applier.ACLUsers() != nil {
		t.Fatalf("restore of a state without users: %v, %v", err, dst.applier.ACLUsers())
	}
}

// FuzzACLEntry: no bytes after an OpACL header make decoding or applying
// panic, and what decodes encodes to bytes that decode the same.
func FuzzACLEntry(f *testing.F) {
	f.Add(aclEntry(setUser("alice", "on", ">pw", "(~k +get)"))[2:])
	f.Add(aclEntry(&ACLChange{Kind: ACLDelUser, Users: []ACLUser{{Name: "a"}}})[2:])
	f.Add(aclEntry(&ACLChange{Kind: ACLLoad, Users: []ACLUser{{Name: "a", Rules: []string{"on"}}}, Init: &ACLChange{Kind: ACLConfig, Node: "n"}})[2:])
	f.Fuzz(func(t *testing.T, payload []byte) {
		data := append([]byte{Version, byte(OpACL)}, payload...)
		e, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(e.Encode(nil))
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("%x re-encodes as %+v, %v", data, again, err)
		}
		fsm := New()
		fsm.ApplyBatch([]*raft.Log{{Index: 1, Type: raft.LogCommand, Data: data}})
	})
}
