package raftfsm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
)

func commandEntry(t int64, c Command) *Entry {
	return &Entry{Op: OpCommand, Time: t, Proto: 2, Commands: []Command{c}}
}

// dump renders a keyspace canonically: databases, keys in order, members
// with scores, expiry times.
func dump(ks *keyspace.Keyspace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rules=%v\n", ks.Rules())
	for i := 0; i < keyspace.NumDBs; i++ {
		db := ks.DB(i)
		var keys []string
		// At time 0 nothing has expired: Each visits every key.
		db.Each(0, func(k string, _ *keyspace.Entry) bool { keys = append(keys, k); return true })
		sort.Strings(keys)
		for _, k := range keys {
			e := db.Peek([]byte(k))
			fmt.Fprintf(&b, "db%d %q exp=%d layout=%s:", i, k, e.ExpireAt, e.Z.Layout())
			e.Z.Range(0, e.Z.Len(), false, func(m []byte, s float64) bool {
				fmt.Fprintf(&b, " %q=%v", m, s)
				return true
			})
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// randomLog returns a deterministic pseudo-random log of writes.
func randomLog(seed uint64, n int) []*Entry {
	r := rand.New(rand.NewPCG(seed, 1))
	var log []*Entry
	now := int64(1_700_000_000_000)
	for i := 0; i < n; i++ {
		now += int64(r.IntN(50))
		db := r.IntN(3)
		key := fmt.Sprintf("k%d", r.IntN(12))
		member := fmt.Sprintf("m%d", r.IntN(40))
		score := fmt.Sprintf("%d", r.IntN(100)-50)
		var c Command
		switch r.IntN(8) {
		case 0, 1, 2:
			c = NewCommand(db, "ZADD", key, score, member)
		case 3:
			c = NewCommand(db, "ZINCRBY", key, "1.5", member)
		case 4:
			c = NewCommand(db, "ZREM", key, member)
		case 5:
			c = NewCommand(db, "ZADD", key, "GT", "CH", score, member, score, member+"x")
		case 6:
			c = NewCommand(db, "DEL", key)
		case 7:
			log = append(log, &Entry{Op: OpMulti, Time: now, Proto: 3, Commands: []Command{
				NewCommand(db, "ZADD", key, score, member), NewCommand(db, "ZREM", key, "m0"),
			}})
			continue
		}
		log = append(log, commandEntry(now, c))
	}
	return log
}

func TestApplierIsDeterministic(t *testing.T) {
	log := randomLog(testutil.Seed(t), 3000)
	a, b := NewApplier(keyspace.New()), NewApplier(keyspace.New())
	for i, e := range log {
		// Each node decodes its own copy of the bytes, as from its log.
		ea, err := Decode(e.Encode(nil))
		if err != nil {
			t.Fatal(err)
		}
		eb, _ := Decode(e.Encode(nil))
		ra, rb := a.Apply(uint64(i+1), ea), b.Apply(uint64(i+1), eb)
		if !bytes.Equal(ra, rb) {
			t.Fatalf("entry %d: replies differ: %q vs %q", i, ra, rb)
		}
	}
	if da, db := dump(a.KS), dump(b.KS); da != db {
		t.Fatalf("states differ:\n%s\n---\n%s", da, db)
	}
}

func TestApplyReplies(t *testing.T) {
	a := NewApplier(keyspace.New())
	steps := []struct {
		e    *Entry
		want string
	}{
		{commandEntry(10, NewCommand(0, "ZADD", "k", "1", "a", "2", "b")), ":2\r\n"},
		{commandEntry(11, NewCommand(0, "ZINCRBY", "k", "0.5", "a")), "$3\r\n1.5\r\n"},
		{&Entry{Op: OpCommand, Time: 12, Proto: 3, Commands: []Command{NewCommand(0, "ZINCRBY", "k", "0.5", "a")}}, ",2\r\n"},
		{commandEntry(13, NewCommand(0, "NOPE", "x")), "-ERR unknown command 'NOPE', with args beginning with: 'x' \r\n"},
		{commandEntry(14, NewCommand(0, "ZADD", "k")), "-ERR wrong number of arguments for 'zadd' command\r\n"},
		{&Entry{Op: OpMulti, Time: 15, Proto: 2, Commands: []Command{NewCommand(0, "ZADD", "k", "5", "c"), NewCommand(0, "ZCARD", "k"), NewCommand(1, "ZCARD", "k")}}, "*3\r\n:1\r\n:3\r\n:0\r\n"},
		// WATCH: k changed at index 6 (the multi above), after index 5.
		{&Entry{Op: OpMulti, Time: 16, Proto: 2, WatchIndex: 5, Watched: []WatchedKey{{DB: 0, Key: []byte("k")}}, Commands: []Command{NewCommand(0, "ZCARD", "k")}}, "*-1\r\n"},
		{&Entry{Op: OpMulti, Time: 17, Proto: 3, WatchIndex: 6, Watched: []WatchedKey{{DB: 0, Key: []byte("k")}}, Commands: []Command{NewCommand(0, "ZCARD", "k")}}, "*1\r\n:3\r\n"},
		{&Entry{Op: OpMulti, Time: 18, Proto: 3, WatchIndex: 6, Watched: []WatchedKey{{DB: 0, Key: []byte("k")}}, Commands: []Command{NewCommand(0, "ZCARD", "k")}}, "*1\r\n:3\r\n"},
	}
	for i, s := range steps {
		if got := string(a.Apply(uint64(i+1), s.e)); got != s.want {
			t.Errorf("step %d: got %q, want %q", i, got, s.want)
		}
	}
}

func TestExpireEntryDeletesOnlyWhatExpired(t *testing.T) {
	a := NewApplier(keyspace.New())
	ks := a.KS
	a.Apply(1, commandEntry(1000, NewCommand(0, "ZADD", "gone", "1", "a")))
	a.Apply(2, commandEntry(1000, NewCommand(0, "ZADD", "kept", "1", "a")))
	ks.DB(0).SetExpire([]byte("gone"), 1500, 2)
	ks.DB(0).SetExpire([]byte("kept"), 1500, 2)
	// kept got a new time after the leader collected it.
	ks.DB(0).SetExpire([]byte("kept"), 9000, 3)
	a.Apply(4, &Entry{Op: OpExpire, Time: 2000, Expired: []ExpiredKey{{DB: 0, Key: []byte("gone"), At: 1500}, {DB: 0, Key: []byte("kept"), At: 1500}}})
	if ks.DB(0).Peek([]byte("gone")) != nil {
		t.Error("expired key survived its OpExpire entry")
	}
	if ks.DB(0).Peek([]byte("kept")) == nil {
		t.Error("a key whose expiry changed was deleted")
	}
}

type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

func TestSnapshotRestore(t *testing.T) {
	f := New()
	log := randomLog(testutil.Seed(t), 2000)
	var logs []*raft.Log
	for i, e := range log {
		logs = append(logs, &raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: e.Encode(nil)})
	}
	f.ApplyBatch(logs[:1500])
	f.applier.Apply(1501, RulesEntry(keyspace.Rules{{Pattern: "p:*", Layout: 1}}))
	f.KS().DB(1).SetExpire([]byte("k1"), 1_900_000_000_000, 1501)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := dump(f.KS())
	// Applies after Snapshot must not leak into the persisted snapshot.
	f.ApplyBatch(logs[1500:])
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := New()
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if got := dump(g.KS()); got != want {
		t.Fatalf("restored state differs:\n%s\n---\n%s", got, want)
	}
	// Every flipped byte is caught (checksum or structure) and the state
	// is left as it was.
	data := sink.Bytes()
	for i := 0; i < len(data); i += 1 + len(data)/300 {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x5a
		h := New()
		before := dump(h.KS())
		if err := h.Restore(io.NopCloser(bytes.NewReader(bad))); err == nil {
			t.Fatalf("restore of a snapshot with byte %d flipped succeeded", i)
		}
		if dump(h.KS()) != before {
			t.Fatalf("failed restore changed the state")
		}
	}
	if err := g.Restore(io.NopCloser(bytes.NewReader(data[:len(data)-1]))); err == nil {
		t.Fatal("restore of a truncated snapshot succeeded")
	}
}

func TestWaitApplied(t *testing.T) {
	f := New()
	ch := f.WaitApplied(3)
	select {
	case <-ch:
		t.Fatal("closed before index 3 was applied")
	default:
	}
	f.ApplyBatch([]*raft.Log{{Index: 3, Type: raft.LogCommand, Data: (&Entry{Op: OpNoop}).Encode(nil)}})
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("not closed after index 3 was applied")
	}
}
