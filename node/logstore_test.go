package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblindb/goblin/raftfsm"
)

func TestChooseLogStore(t *testing.T) {
	fresh := t.TempDir()
	withBolt := t.TempDir()
	os.WriteFile(filepath.Join(withBolt, boltLogFile), nil, 0o644)
	withWAL := t.TempDir()
	os.Mkdir(filepath.Join(withWAL, walDir), 0o755)
	for _, tc := range []struct {
		dir  string
		want LogStore
		got  LogStore
		err  bool
	}{
		{fresh, LogStoreAuto, LogStoreWAL, false},
		{fresh, LogStoreBolt, LogStoreBolt, false},
		{fresh, LogStoreWAL, LogStoreWAL, false},
		{withBolt, LogStoreAuto, LogStoreBolt, false},
		{withBolt, LogStoreBolt, LogStoreBolt, false},
		{withBolt, LogStoreWAL, "", true},
		{withWAL, LogStoreAuto, LogStoreWAL, false},
		{withWAL, LogStoreBolt, "", true},
	} {
		got, err := chooseLogStore(tc.dir, tc.want)
		if (err != nil) != tc.err || got != tc.got {
			t.Errorf("chooseLogStore(%s, %q) = %q, %v; want %q (error %v)", filepath.Base(tc.dir), tc.want, got, err, tc.got, tc.err)
		}
	}
	for _, s := range []string{"wal", "bolt", "auto", ""} {
		if _, err := ParseLogStore(s); err != nil {
			t.Errorf("ParseLogStore(%q): %v", s, err)
		}
	}
	if _, err := ParseLogStore("rocks"); err == nil {
		t.Error("ParseLogStore(rocks) succeeded")
	}
}

func zincrby(t *testing.T, n *Node) string {
	t.Helper()
	res, err := n.Apply(raftfsm.CommandEntry(n.Now(), 0, "ZINCRBY", "k", "1", "m"))
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Reply)
}

// TestRestartOnEachLogStore writes past several snapshots (so raft
// deletes log prefixes), restarts, and checks the state is all there.
func TestRestartOnEachLogStore(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		for _, fsync := range []Fsync{FsyncAlways, FsyncEverysec} {
			t.Run(string(store)+"/"+fsync.String(), func(t *testing.T) {
				dir := t.TempDir()
				n := startNode(t, Config{DataDir: dir, LogStore: store, Fsync: fsync, SnapshotThreshold: 64})
				const writes = 300
				for range writes {
					zincrby(t, n)
				}
				if err := n.Raft().Snapshot().Error(); err != nil {
					t.Logf("snapshot: %v", err)
				}
				if err := n.Close(); err != nil {
					t.Fatal(err)
				}
				n = startNode(t, Config{DataDir: dir, LogStore: LogStoreAuto, Fsync: fsync, SnapshotThreshold: 64})
				defer n.Close()
				if n.stores.kind != store {
					t.Fatalf("reopened with %q, want %q", n.stores.kind, store)
				}
				if got, want := zincrby(t, n), "$3\r\n301\r\n"; got != want {
					t.Fatalf("after restart ZINCRBY replied %q, want %q", got, want)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := n.ReadBarrier(ctx, false); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
