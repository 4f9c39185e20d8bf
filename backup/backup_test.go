package backup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/raftfsm"
)

// log is a small log that fills every part of the state the digest
// covers: standard and packed keys, two databases, a time to live, rules
// and ACL users.
type log struct {
	entries []*raftfsm.Entry
}

func (l *log) cmd(db int, args ...string) {
	l.entries = append(l.entries, raftfsm.CommandEntry(1_700_000_000_000, db, args...))
}

func sampleLog(rng *rand.Rand) *log {
	l := &log{}
	l.entries = append(l.entries, raftfsm.RulesEntry(keyspace.Rules{{Pattern: "p:*", Layout: packed.Int32Float32}}))
	for i := range 50 {
		l.cmd(0, "zadd", "std", strconv.Itoa(rng.IntN(1000)), "m"+strconv.Itoa(i))
		l.cmd(0, "zadd", "p:1", strconv.Itoa(rng.IntN(1000)), strconv.Itoa(rng.IntN(1<<20)))
		l.cmd(3, "zadd", "db3", "1.5", fmt.Sprintf("member %d", i))
	}
	l.cmd(0, "zcreate", "u", "uuid:float64", "2.25", "0f0e0d0c-0b0a-0908-0706-050403020100")
	l.cmd(0, "pexpireat", "std", "1800000000000")
	l.entries = append(l.entries, &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: "alice", Rules: []string{"on", "#" + fmt.Sprintf("%064x", 7), "~p:*", "+@read"}}}}})
	return l
}

// apply runs the log on a new state machine and captures its state.
func (l *log) apply(t testing.TB) *raftfsm.State {
	t.Helper()
	f := raftfsm.New()
	for i, e := range l.entries {
		res := f.ApplyBatch([]*raft.Log{{Index: uint64(i + 1), Type: raft.LogCommand, Data: e.Encode(nil)}})
		if r, ok := res[0].(raftfsm.Result); ok && (r.Err != nil || bytes.HasPrefix(r.Reply, []byte("-"))) {
			t.Fatalf("entry %d: %v %q", i, r.Err, r.Reply)
		}
	}
	return f.Capture()
}

func TestDigestDeterministicAndSensitive(t *testing.T) {
	rng := testutil.Rand(t, 5)
	l := sampleLog(rng)
	st := l.apply(t)
	sum, c := Digest(st)
	again, _ := Digest(l.apply(t))
	if sum != again {
		t.Fatal("the same log gave two digests")
	}
	if c.Keys != 4 || c.Expires != 1 || c.Users != 2 || c.Members != 50+50+1+uint64(viewLen(st, "p:1")) {
		t.Fatalf("counts %+v", c)
	}
	if len(c.Layouts) != 3 || c.Layouts[1].Layout != packed.Int32Float32 || c.Layouts[2].Layout != packed.UUIDFloat64 {
		t.Fatalf("layouts %+v", c.Layouts)
	}
	// Each change of something the digest covers changes it.
	for _, change := range [][]string{
		{"zadd", "std", "999999", "m1"},             // a score
		{"zadd", "db3", "1.5", "another"},           // a member
		{"pexpireat", "std", "1800000000001"},       // a time to live
		{"persist", "std"},                          // no time to live
		{"zcreate", "x", "int64:float32", "1", "1"}, // a new key
		{"zcreate", "x", "int64:float64", "1", "1"}, // the same, another layout
		{"rename", "db3", "db3b"},                   // a name
	} {
		m := &log{entries: append([]*raftfsm.Entry(nil), l.entries...)}
		db := 0
		if change[1] == "db3" {
			db = 3
		}
		m.cmd(db, change...)
		if s, _ := Digest(m.apply(t)); s == sum {
			t.Errorf("%v: digest unchanged", change)
		}
	}
	m := &log{entries: append([]*raftfsm.Entry(nil), l.entries...)}
	m.entries = append(m.entries, &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: "alice", Rules: []string{"-@read"}}}}})
	if s, _ := Digest(m.apply(t)); s == sum {
		t.Error("an ACL change left the digest unchanged")
	}
	// What the digest leaves out: the rules.
	m = &log{entries: append([]*raftfsm.Entry(nil), l.entries...)}
	m.entries = append(m.entries, raftfsm.RulesEntry(nil))
	if s, _ := Digest(m.apply(t)); s != sum {
		t.Error("the rules changed the digest")
	}
	if p, ok := ParseSum(sum.String()); !ok || p != sum {
		t.Fatal("ParseSum(String())")
	}
}

func TestWriteRead(t *testing.T) {
	st := sampleLog(testutil.Rand(t, 5)).apply(t)
	var buf bytes.Buffer
	created := time.UnixMilli(1_750_000_000_123)
	wm, err := Write(&buf, st, Meta{Created: created, Node: "n2", Term: 9})
	if err != nil {
		t.Fatal(err)
	}
	if wm.Size != int64(buf.Len()) {
		t.Fatalf("Size %d, wrote %d", wm.Size, buf.Len())
	}
	hm, err := ReadMeta(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	m, got, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Meta{hm, m} {
		if x.Node != "n2" || x.Term != 9 || x.Index != st.Index || !x.Created.Equal(created) || x.Digest != wm.Digest ||
			x.Version != Version || x.SnapshotVersion != raftfsm.SnapshotVersion || !x.Rules.Equal(st.View().Rules()) ||
			fmt.Sprint(x.Counts) != fmt.Sprint(wm.Counts) {
			t.Fatalf("read %+v, wrote %+v", x, wm)
		}
	}
	if m.Size != wm.Size || m.SnapshotSize != wm.SnapshotSize {
		t.Fatalf("sizes %d/%d, wrote %d/%d", m.Size, m.SnapshotSize, wm.Size, wm.SnapshotSize)
	}
	if sum, _ := Digest(got); sum != wm.Digest {
		t.Fatal("the state read has another digest")
	}
	if got.ACLUsers().Get("alice") == nil || got.KS.DB(0).Peek([]byte("std")).ExpireAt != 1_800_000_000_000 {
		t.Fatal("users or time to live lost")
	}
}

// Every byte flipped and every truncation is refused.
func TestReadRefusesDamage(t *testing.T) {
	st := sampleLog(testutil.Rand(t, 5)).apply(t)
	var buf bytes.Buffer
	if _, err := Write(&buf, st, Meta{Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	damaged := make([]byte, len(file))
	for i := range file {
		copy(damaged, file)
		damaged[i] ^= 0x20
		if _, _, err := Read(bytes.NewReader(damaged)); !isRefusal(err) {
			t.Fatalf("byte %d of %d flipped: %v", i, len(file), err)
		}
	}
	for n := 0; n < len(file); n++ {
		if _, _, err := Read(bytes.NewReader(file[:n])); !isRefusal(err) {
			t.Fatalf("cut at %d of %d: %v", n, len(file), err)
		}
	}
	if _, _, err := Read(bytes.NewReader(append(append([]byte(nil), file...), 0))); !isRefusal(err) {
		t.Fatalf("a byte appended: %v", err)
	}
	future := append([]byte(nil), file...)
	future[8] = Version + 1
	if _, _, err := Read(bytes.NewReader(future)); !errors.Is(err, ErrVersion) {
		t.Fatalf("a later version: %v", err)
	}
	// A later snapshot format inside (its header's checksum made right).
	m, _ := ReadMeta(bytes.NewReader(file))
	m.SnapshotVersion = raftfsm.SnapshotVersion + 1
	hdr := encodeHeader(m)
	pre := append(append([]byte(nil), file[:9]...), binary.LittleEndian.AppendUint32(nil, uint32(len(hdr)))...)
	pre = append(pre, hdr...)
	pre = binary.LittleEndian.AppendUint32(pre, crc32.Checksum(pre, castagnoli))
	if _, err := ReadMeta(bytes.NewReader(pre)); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "snapshot format") {
		t.Fatalf("a later snapshot format: %v", err)
	}
}

func isRefusal(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotBackup) || errors.Is(err, ErrVersion)
}

// Writing and reading stream: a state of many members goes through in
// bounded buffers (the test checks the result; BenchmarkDigest the cost).
func TestLargeRoundTrip(t *testing.T) {
	f := raftfsm.New()
	var argv [][]byte
	argv = append(argv, []byte("zcreate"), []byte("big"), []byte("int32:float32"))
	for i := range 200_000 {
		argv = append(argv, []byte(strconv.Itoa(i%977)), []byte(strconv.Itoa(i)))
	}
	e := &raftfsm.Entry{Op: raftfsm.OpCommand, Proto: 2, Time: 1, Commands: []raftfsm.Command{{Argv: argv}}}
	f.ApplyBatch([]*raft.Log{{Index: 1, Type: raft.LogCommand, Data: e.Encode(nil)}})
	st := f.Capture()
	var buf bytes.Buffer
	wm, err := Write(&buf, st, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts.Members != 200_000 || m.Digest != wm.Digest {
		t.Fatalf("read %+v", m.Counts)
	}
	t.Logf("200000 int32:float32 members: snapshot %d bytes, file %d bytes", m.SnapshotSize, m.Size)
}

// bigState is a state of one int32:float32 set of n members.
func bigState(n int) *raftfsm.State {
	f := raftfsm.New()
	argv := [][]byte{[]byte("zcreate"), []byte("big"), []byte("int32:float32")}
	for i := range n {
		argv = append(argv, []byte(strconv.Itoa(i%977)), []byte(strconv.Itoa(i)))
	}
	e := &raftfsm.Entry{Op: raftfsm.OpCommand, Proto: 2, Time: 1, Commands: []raftfsm.Command{{Argv: argv}}}
	f.ApplyBatch([]*raft.Log{{Index: 1, Type: raft.LogCommand, Data: e.Encode(nil)}})
	return f.Capture()
}

// BenchmarkWrite writes a backup of 1,000,000 int32:float32 members
// (digest, snapshot, compression) and reports the file's bytes per member.
func BenchmarkWrite(b *testing.B) {
	const n = 1_000_000
	st := bigState(n)
	var size int64
	b.ResetTimer()
	for range b.N {
		m, err := Write(io.Discard, st, Meta{})
		if err != nil {
			b.Fatal(err)
		}
		size = m.Size
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/member")
	b.ReportMetric(float64(size)/n, "file-bytes/member")
}

// BenchmarkRead reads and verifies the same backup back.
func BenchmarkRead(b *testing.B) {
	const n = 1_000_000
	var buf bytes.Buffer
	if _, err := Write(&buf, bigState(n), Meta{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, _, err := Read(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/member")
}

func BenchmarkDigest(b *testing.B) {
	const n = 1_000_000
	st := bigState(n)
	b.ResetTimer()
	for range b.N {
		Digest(st)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/member")
}

// viewLen returns the length of key's set in database 0 of st.
func viewLen(st *raftfsm.State, key string) int {
	n := -1
	st.View().Each(0, func(e *keyspace.ViewEntry) {
		if e.Key == key {
			n = e.Z.Len()
		}
	})
	return n
}
