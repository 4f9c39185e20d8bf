package node

import (
	"context"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/raftfsm"
)

func zadd(t *testing.T, n *Node, key, score, member string) string {
	t.Helper()
	res, err := n.Propose(raftfsm.CommandEntry(n.Now(), 0, "ZADD", key, score, member))()
	if err != nil {
		t.Fatalf("ZADD: %v", err)
	}
	return string(res.Reply)
}

func TestSingleNodeWriteReadRestart(t *testing.T) {
	dir := t.TempDir()
	rules := keyspace.Rules{{Pattern: "p:*", Layout: packed.Int32Float32}}
	n := startNode(t, Config{DataDir: dir, Rules: rules})
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
	n2 := startNode(t, Config{DataDir: dir, Rules: rules})
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
	n := startNode(t, Config{})
	zadd(t, n, "k", "1", "a")
	ks := n.FSM().KS()
	ks.Lock()
	ks.DB(0).SetExpire([]byte("k"), n.Now()-1, n.AppliedIndex())
	ks.Unlock()
	before := n.AppliedIndex()
	testutil.Poll(t, 10*time.Second, "the leader to delete the expired key", func() bool {
		ks.RLock()
		defer ks.RUnlock()
		return ks.DB(0).Peek([]byte("k")) == nil
	})
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
