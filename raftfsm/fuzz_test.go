package raftfsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
)

// The fuzz targets of the state machine. FuzzDecodeEntry feeds arbitrary
// bytes to the entry decoder; FuzzApplyEntry feeds them to FSM.ApplyBatch
// twice over: as one raw log entry, and read as a small program that
// builds entries from a vocabulary of command names, options, keys and
// edge-case numbers, so the fuzzer reaches the commands' code and not only
// the decoder's.

// FuzzDecodeEntry checks that Decode never panics, and that whatever
// decodes re-encodes to an entry that decodes the same (varints may have
// had overlong forms, so the bytes may differ).
func FuzzDecodeEntry(f *testing.F) {
	for _, e := range seedEntries() {
		f.Add(e.Encode(nil))
		// The same with a proposal header.
		h := *e
		h.Term, h.Proposal = 3, 77
		f.Add(h.Encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(e.Encode(nil))
		if err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if !reflect.DeepEqual(normalize(again), normalize(e)) {
			t.Fatalf("round trip differs:\n%+v\n%+v", e, again)
		}
		checkRestamp(t, data, e)
	})
}

// FuzzApplyEntry checks that no input makes ApplyBatch panic, that an
// entry recorded as failed leaves the state as it was, that two FSMs
// applying the same log end in the same state with the same replies, and
// that every sorted set is still sound afterwards.
func FuzzApplyEntry(f *testing.F) {
	for _, e := range seedEntries() {
		f.Add(e.Encode(nil))
	}
	for _, p := range fuzzPrograms() {
		f.Add(p)
	}
	var group [][]byte
	for _, e := range seedEntries() {
		group = append(group, e.Encode(nil))
	}
	f.Add(AppendGroup(nil, group))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := newFuzzFSM(t), newFuzzFSM(t)
		next := uint64(len(fuzzSetup()) + 1)

		// The input as one raw entry: applied, or failed with nothing
		// changed.
		before := dump(a.KS())
		ra := a.ApplyBatch([]*raft.Log{{Index: next, Term: 2, Type: raft.LogCommand, Data: bytes.Clone(data)}})
		rb := b.ApplyBatch([]*raft.Log{{Index: next, Term: 2, Type: raft.LogCommand, Data: bytes.Clone(data)}})
		if res, ok := ra[0].(Result); ok && res.Err != nil {
			if res.Reply != nil || dump(a.KS()) != before {
				t.Fatalf("a failed entry changed the state or replied %q", res.Reply)
			}
		}
		sameGroupResults(t, ra[0], rb[0])
		next++

		// The input as a program of entries, applied in one batch.
		var la, lb []*raft.Log
		for _, e := range fuzzEntries(data) {
			enc := e.Encode(nil)
			la = append(la, &raft.Log{Index: next, Term: 2, Type: raft.LogCommand, Data: enc})
			lb = append(lb, &raft.Log{Index: next, Term: 2, Type: raft.LogCommand, Data: bytes.Clone(enc)})
			next++
		}
		if len(la) > 0 {
			sameResults(t, a.ApplyBatch(la), b.ApplyBatch(lb))
		}
		if da, db := dump(a.KS()), dump(b.KS()); da != db {
			t.Fatalf("states differ:\n%s\n---\n%s", da, db)
		}
		checkSets(t, a.KS())

		// The same program and the raw input as groups (group.go), on two
		// more FSMs: they agree, and the sets stay sound.
		c, d := newFuzzFSM(t), newFuzzFSM(t)
		subs := [][]byte{bytes.Clone(data)}
		for _, l := range la {
			subs = append(subs, l.Data)
		}
		group := AppendGroup(nil, subs)
		for _, g := range [][]byte{group, bytes.Clone(data), append([]byte{VersionGroup}, data...)} {
			gc := c.ApplyBatch([]*raft.Log{{Index: next, Term: 2, Type: raft.LogCommand, Data: bytes.Clone(g)}})
			gd := d.ApplyBatch([]*raft.Log{{Index: next, Term: 2, Type: raft.LogCommand, Data: bytes.Clone(g)}})
			sameGroupResults(t, gc[0], gd[0])
			next++
		}
		if dc, dd := dump(c.KS()), dump(d.KS()); dc != dd {
			t.Fatalf("states differ after groups:\n%s\n---\n%s", dc, dd)
		}
		checkSets(t, c.KS())
	})
}

func sameResults(t *testing.T, ra, rb []interface{}) {
	t.Helper()
	for i := range ra {
		x, _ := ra[i].(Result)
		y, _ := rb[i].(Result)
		if x.Index != y.Index || !bytes.Equal(x.Reply, y.Reply) || fmt.Sprint(x.Err) != fmt.Sprint(y.Err) {
			t.Fatalf("entry %d: results differ: %+v vs %+v", i, x, y)
		}
	}
}

// sameGroupResults compares two results that may be groups.
func sameGroupResults(t *testing.T, x, y interface{}) {
	t.Helper()
	gx, okx := x.(GroupResult)
	gy, oky := y.(GroupResult)
	if okx != oky || len(gx) != len(gy) {
		t.Fatalf("results differ: %+v vs %+v", x, y)
	}
	if !okx {
		sameResults(t, []interface{}{x}, []interface{}{y})
		return
	}
	for i := range gx {
		sameResults(t, []interface{}{gx[i]}, []interface{}{gy[i]})
	}
}

// checkSets runs every sorted set's invariant check.
func checkSets(t *testing.T, ks *keyspace.Keyspace) {
	t.Helper()
	for i := 0; i < keyspace.NumDBs; i++ {
		ks.DB(i).Each(0, func(k string, e *keyspace.Entry) bool {
			if e.Z.Len() == 0 {
				t.Fatalf("db%d %q: an empty set is stored", i, k)
			}
			if err := e.Z.Check(); err != nil {
				t.Fatalf("db%d %q: %v", i, k, err)
			}
			return true
		})
	}
}

const fuzzEpoch = int64(1_700_000_000_000)

// fuzzSetup is the log every fuzzed FSM starts from: packed rules, sets
// of every kind in databases 0 and 1, one with an expiry, one declared.
func fuzzSetup() []*Entry {
	c := func(db int, args ...string) *Entry { return commandEntry(fuzzEpoch, NewCommand(db, args...)) }
	return []*Entry{
		RulesEntry(keyspace.Rules{{Pattern: "p:*", Layout: packed.Int64Float64}, {Pattern: "i:*", Layout: packed.Int32Float32}, {Pattern: "u:*", Layout: packed.UUIDFloat32}}),
		c(0, "ZADD", "k", "1", "a", "2", "b", "2", "c", "3", "d", "-inf", "m", "+inf", "z"),
		c(0, "ZADD", "k2", "1.5", "a", "0", "x", "0", "y"),
		c(0, "ZADD", "p:1", "1", "1", "2", "-2", "3", "9007199254740993"),
		c(0, "ZADD", "i:1", "1", "10", "0.5", "-20"),
		c(0, "ZADD", "u:1", "1", "00000000-0000-0000-0000-000000000001", "2", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
		c(1, "ZADD", "k", "5", "a"),
		c(0, "ZADD", "e", "1", "a"),
		c(0, "PEXPIRE", "e", "100"),
		c(0, "ZCREATE", "d", "int64:float32"),
	}
}

// newFuzzFSM returns an FSM in the state fuzzSetup leaves: a copy of one
// built once, as applying the setup for every input would cost more than
// the input.
func newFuzzFSM(t testing.TB) *FSM {
	base, err := fuzzBase()
	if err != nil {
		t.Fatal(err)
	}
	f := New()
	f.applier.KS = base.KS().Clone()
	f.applier.now = base.applier.now
	f.applied.Store(base.Applied())
	return f
}

var fuzzBase = sync.OnceValues(func() (*FSM, error) {
	f := New()
	var logs []*raft.Log
	for i, e := range fuzzSetup() {
		logs = append(logs, &raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: e.Encode(nil)})
	}
	for i, r := range f.ApplyBatch(logs) {
		if res := r.(Result); res.Err != nil || bytes.HasPrefix(res.Reply, []byte("-")) {
			return nil, fmt.Errorf("setup entry %d: %q %v", i, res.Reply, res.Err)
		}
	}
	return f, nil
})

// fuzzWords is the vocabulary programs draw arguments from; fuzzNames
// the command names (sorted, so a corpus means the same from run to run).
var fuzzNames, fuzzWords = func() ([]string, []string) {
	var names []string
	for _, s := range command.All() {
		if s.Run != nil { // the state machine's commands, not the edge's
			names = append(names, s.Name)
		}
	}
	names = append(names, "multi", "exec", "nosuch")
	slices.Sort(names)
	words := []string{
		// keys of the setup, and a few absent ones
		"k", "k2", "p:1", "i:1", "u:1", "e", "d", "p:2", "i:2", "u:2", "new", "",
		// options
		"nx", "xx", "gt", "lt", "ch", "incr", "withscores", "withscore", "limit", "byscore", "bylex", "rev",
		"count", "min", "max", "weights", "aggregate", "sum", "match", "type", "replace", "db", "async", "sync",
		"encoding", "freq", "idletime", "refcount", "help", "samples", "usage", "zset", "*", "?",
		"standard", "int32:float32", "int64:float64", "uuid:float64",
		// members and numbers at the edges of what commands parse
		"a", "b", "z", "1", "-2", "10", "9007199254740993", "00000000-0000-0000-0000-000000000001",
		"0", "-1", "2", "3", "15", "16", "100", "1000000", "-1000000", "2147483647", "2147483648", "-2147483649",
		strconv.FormatInt(math.MaxInt64, 10), strconv.FormatInt(math.MinInt64, 10), strconv.FormatInt(-math.MaxInt64, 10),
		strconv.FormatInt(math.MaxInt64/2+1, 10), strconv.FormatInt(-(math.MaxInt64/2 + 1), 10), "18446744073709551616",
		"0.5", "-0", "1e308", "1e309", "-1e308", "5e-324", "inf", "-inf", "+inf", "nan", "1.5e-300", "3.4e38", "3.5e38",
		"(1", "[a", "(a", "-", "+", "(", "[", "(inf", "(-inf", "0x10", " 1", "1 ",
	}
	return names, words
}()

// fuzzTimes are the clocks program entries carry.
var fuzzTimes = [8]int64{fuzzEpoch, fuzzEpoch + 1, fuzzEpoch + 100_000, 0, -1, math.MaxInt64, math.MinInt64, fuzzEpoch + 1<<40}

// fuzzReader reads a program; past its end it reads zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// fuzzEntries reads data as up to 8 entries. Each starts with a header
// byte: op (low 3 bits), clock (next 3), RESP3 (bit 6), Redis 7.0's
// doubles (bit 7).
func fuzzEntries(data []byte) []*Entry {
	r := &fuzzReader{data}
	var out []*Entry
	for len(r.b) > 0 && len(out) < 8 {
		out = append(out, r.entry())
	}
	return out
}

func (r *fuzzReader) entry() *Entry {
	h := r.next()
	e := &Entry{Time: fuzzTimes[h>>3&7], Proto: 2 + h>>6&1, Double70: h&0x80 != 0}
	switch h & 7 {
	case 0, 1:
		e.Op = OpCommand
		e.Commands = []Command{r.command()}
	case 2:
		e.Op = OpBatch
		for n := int(r.next()%4) + 1; n > 0; n-- {
			e.Commands = append(e.Commands, r.command())
		}
	case 3, 4:
		e.Op = OpMulti
		e.WatchIndex = uint64(r.next())
		for n := int(r.next() % 3); n > 0; n-- {
			e.Watched = append(e.Watched, WatchedKey{DB: int(r.next() % 2), Key: r.arg(), Expired: r.next()&1 != 0, Absent: r.next()&1 != 0, Index: uint64(r.next())})
		}
		for n := int(r.next() % 5); n > 0; n-- {
			e.Commands = append(e.Commands, r.command())
		}
	case 5:
		e.Op = OpExpire
		for n := int(r.next()%3) + 1; n > 0; n-- {
			e.Expired = append(e.Expired, ExpiredKey{DB: int(r.next() % 2), Key: r.arg(), At: fuzzTimes[r.next()&7]})
		}
	case 6:
		e.Op = OpRules
		for n := int(r.next() % 3); n > 0; n-- {
			e.Rules = append(e.Rules, Rule{Pattern: string(r.arg()), Layout: r.next() % 7})
		}
	case 7:
		e.Op = OpNoop
	}
	return e
}

// command reads a database (0 to 3), an argument count, a command name and
// its arguments.
func (r *fuzzReader) command() Command {
	db := int(r.next() % 4)
	argc := int(r.next()%8) + 1
	argv := [][]byte{[]byte(fuzzNames[int(r.next())%len(fuzzNames)])}
	for len(argv) < argc {
		argv = append(argv, r.arg())
	}
	return Command{DB: db, Argv: argv}
}

// arg reads a word of the vocabulary, or a literal: a length byte and
// that many bytes.
func (r *fuzzReader) arg() []byte {
	t := int(r.next())
	if t < len(fuzzWords) {
		return []byte(fuzzWords[t])
	}
	n := min(int(r.next()%32), len(r.b))
	lit := r.b[:n:n]
	r.b = r.b[n:]
	return lit
}

// fuzzProgram writes the program for an entry with header h and one
// command per argument vector (for OpMulti, no watched keys).
func fuzzProgram(h byte, cmds ...[]string) []byte {
	p := []byte{h}
	switch h & 7 {
	case 2:
		p = append(p, byte(len(cmds)-1))
	case 3, 4:
		p = append(p, 0, 0, byte(len(cmds)))
	}
	for _, argv := range cmds {
		p = append(p, 0, byte(len(argv)-1), byte(slices.Index(fuzzNames, argv[0])))
		for _, a := range argv[1:] {
			if i := slices.Index(fuzzWords, a); i >= 0 {
				p = append(p, byte(i))
			} else {
				p = append(p, 255, byte(len(a)))
				p = append(p, a...)
			}
		}
	}
	return p
}

// fuzzPrograms seeds FuzzApplyEntry with commands of every family, in
// entries of every kind.
func fuzzPrograms() [][]byte {
	const single, batch, multi, resp3 = 0, 2, 3, 1 << 6
	return [][]byte{
		fuzzProgram(single, []string{"zadd", "k", "nx", "ch", "1", "a"}),
		fuzzProgram(single|resp3, []string{"zincrby", "p:1", "1", "1"}),
		fuzzProgram(batch, []string{"zadd", "i:1", "2147483648", "1"}, []string{"zrem", "k", "a"}, []string{"zpopmin", "k2", "2"}),
		fuzzProgram(multi, []string{"zrandmember", "k", "-5", "withscores"}, []string{"zrange", "k", "0", "-1", "rev"}),
		fuzzProgram(multi|resp3, []string{"zunionstore", "new", "2", "k", "p:1", "weights", "1", "2"}, []string{"zscan", "k", "0", "count", "1"}),
		fuzzProgram(single, []string{"zrangestore", "new", "k", "(1", "+inf", "byscore", "limit", "0", "2"}),
		fuzzProgram(single, []string{"zmpop", "2", "k", "k2", "max", "count", "10"}),
		fuzzProgram(single, []string{"bzpopmin", "k", "e", "0"}),
		fuzzProgram(multi, []string{"select", "1"}, []string{"zcard", "k"}, []string{"move", "k", "0"}),
		fuzzProgram(single, []string{"copy", "k", "new", "db", "2", "replace"}),
		fuzzProgram(single, []string{"expire", "k", "100", "gt"}),
		fuzzProgram(single, []string{"zcreate", "u:2", "uuid:float64", "1", "00000000-0000-0000-0000-000000000001"}),
		fuzzProgram(multi, []string{"object", "encoding", "k"}, []string{"memory", "usage", "p:1"}),
		fuzzProgram(single, []string{"flushdb", "async"}),
		fuzzProgram(single, []string{"nosuch", "k"}),
	}
}

// seedEntries are real entries: the samples of the entry tests and a
// random log of writes.
func seedEntries() []*Entry {
	return append(sampleEntries(), randomLog(1, 40)...)
}

// FuzzReadSnapshot checks that restoring arbitrary bytes is an error,
// never a panic. The input is read twice: as a whole snapshot file, and
// as the keyspace inside a snapshot whose header and checksum are made
// right, so the fuzzer reaches the keyspace decoder past the checksum.
// Whatever restores is sound and writes back to a snapshot that restores
// the same.
func FuzzReadSnapshot(f *testing.F) {
	var whole bytes.Buffer
	fsm := newFuzzFSM(f)
	st := &State{KS: fsm.KS(), Now: fsm.applier.Now(), Index: fsm.Applied(), acl: fsm.applier.acl}
	if err := WriteSnapshot(&whole, st); err != nil {
		f.Fatal(err)
	}
	f.Add(whole.Bytes())
	// The body after the header: the keyspace, then the ACL section.
	var body bytes.Buffer
	if err := fsm.KS().Encode(&body); err != nil {
		f.Fatal(err)
	}
	body.Write(st.acl.encode(nil))
	f.Add(body.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		readSnapshotSound(t, data)
		body := append(append([]byte(nil), snapshotMagic[:]...), 42, 7)
		body = append(body, data...)
		readSnapshotSound(t, binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli)))
	})
}

func readSnapshotSound(t *testing.T, data []byte) {
	t.Helper()
	st, err := ReadSnapshot(bytes.NewReader(data))
	if err != nil {
		return
	}
	checkSets(t, st.KS)
	var again bytes.Buffer
	if err := WriteSnapshot(&again, st); err != nil {
		t.Fatal(err)
	}
	st2, err := ReadSnapshot(bytes.NewReader(again.Bytes()))
	if err != nil {
		t.Fatalf("a restored snapshot, written again, does not restore: %v", err)
	}
	if dump(st2.KS) != dump(st.KS) || st2.Now != st.Now || st2.Index != st.Index || !bytes.Equal(st2.acl.encode(nil), st.acl.encode(nil)) {
		t.Fatalf("a restored snapshot, written again, restores differently")
	}
}
