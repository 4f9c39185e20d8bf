package node

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/raftfsm"
)

// mustNewNode starts a single-voter node on raft's in-memory transport
// with its data in dir.
func mustNewNode(t *testing.T, dir string, rules keyspace.Rules) *Node {
	t.Helper()
	_, trans := raft.NewInmemTransport("")
	n, err := New(Config{
		ID: "n1", DataDir: dir, Transport: trans, Bootstrap: true, Fsync: FsyncEverysec, Rules: rules,
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func waitReady(t *testing.T, n *Node) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !n.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("node did not become a ready leader")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func zadd(t *testing.T, n *Node, key, score, member string) string {
	t.Helper()
	e := &raftfsm.Entry{Op: raftfsm.OpCommand, Time: n.Now(), Proto: 2,
		Commands: []raftfsm.Command{{Argv: [][]byte{[]byte("ZADD"), []byte(key), []byte(score), []byte(member)}}}}
	res, err := n.Propose(e)()
	if err != nil {
		t.Fatalf("ZADD: %v", err)
	}
	return string(res.Reply)
}

func TestSingleNodeWriteReadRestart(t *testing.T) {
	dir := t.TempDir()
	rules := keyspace.Rules{{Pattern: "p:*", Layout: packed.Int32Float32}}
	n := mustNewNode(t, dir, rules)
	waitReady(t, n)
	if got := zadd(t, n, "p:1", "1.5", "42"); got != ":1\r\n" {
		t.Fatalf("ZADD reply %q", got)
	}
	if got := zadd(t, n, "s", "2", "x"); got != ":1\r\n" {
		t.Fatalf("ZADD reply %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.ReadBarrier(ctx, false); err != nil {
		t.Fatal(err)
	}
	check := func(n *Node) {
		t.Helper()
		n.View(func(ks *keyspace.Keyspace, now int64) {
			e := ks.DB(0).Get([]byte("p:1"), now)
			if e == nil || e.Z.Layout() != packed.Int32Float32 {
				t.Fatalf("p:1 = %+v, want an int32:float32 set (rules replicated before the write)", e)
			}
			if s, ok := e.Z.Score([]byte("42")); !ok || s != 1.5 {
				t.Fatalf("p:1 42 = %v %v", s, ok)
			}
			if ks.DB(0).Get([]byte("s"), now) == nil {
				t.Fatal("s missing")
			}
		})
	}
	check(n)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// Same directory: the node restores its state and does not bootstrap
	// again (it would fail to, with state present).
	n2 := mustNewNode(t, dir, rules)
	waitReady(t, n2)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := n2.ReadBarrier(ctx2, false); err != nil {
		t.Fatal(err)
	}
	check(n2)
	if st := n2.Status(); st.Role != "master" || st.Applied == 0 {
		t.Fatalf("status after restart: %+v", st)
	}
}

func TestExpiredKeysAreDeletedThroughTheLog(t *testing.T) {
	n := mustNewNode(t, t.TempDir(), nil)
	waitReady(t, n)
	zadd(t, n, "k", "1", "a")
	ks := n.FSM().KS()
	ks.Lock()
	ks.DB(0).SetExpire([]byte("k"), n.Now()-1, n.AppliedIndex())
	ks.Unlock()
	before := n.AppliedIndex()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ks.RLock()
		gone := ks.DB(0).Peek([]byte("k")) == nil
		ks.RUnlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader never deleted the expired key")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n.AppliedIndex() <= before {
		t.Fatal("the key vanished without a log entry")
	}
}

func TestParseFsync(t *testing.T) {
	for in, want := range map[string]Fsync{"always": FsyncAlways, "EVERYSEC": FsyncEverysec} {
		if got, err := ParseFsync(in); err != nil || got != want {
			t.Errorf("ParseFsync(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseFsync("no"); err == nil {
		t.Error("ParseFsync(no) succeeded")
	}
}
