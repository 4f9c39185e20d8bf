package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblindb/goblin/backup"
	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

// fill writes a few kinds of keys through n: standard and packed sets, a
// time to live, a second database, an ACL user.
func fill(t *testing.T, n *Node, tag string) {
	t.Helper()
	for _, argv := range [][]string{
		{"zadd", tag + ":std", "1", "a", "2.5", "b"},
		{"zcreate", tag + ":packed", "int32:float32", "1", "10", "2", "20", "-3", "30"},
		{"zcreate", tag + ":uuid", "uuid:float64", "0.5", "00112233-4455-6677-8899-aabbccddeeff"},
		{"zadd", tag + ":ttl", "7", "x"},
		{"pexpireat", tag + ":ttl", fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())},
	} {
		apply(t, n, 0, argv...)
	}
	apply(t, n, 5, "zadd", tag+":db5", "3", "y")
	e := &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: tag + "-user", Rules: []string{"on", "#" + fmt.Sprintf("%064x", 42), "~*", "+@all"}}}}}
	if _, err := n.Apply(e); err != nil {
		t.Fatal(err)
	}
}

func apply(t *testing.T, n *Node, db int, args ...string) {
	t.Helper()
	res, err := n.Apply(raftfsm.CommandEntry(time.Now().UnixMilli(), db, args...))
	if err != nil || bytes.HasPrefix(res.Reply, []byte("-")) {
		t.Fatalf("%v: %v %q", args, err, res.Reply)
	}
}

// takeBackup backs n up into a byte slice.
func takeBackup(t *testing.T, n *Node) ([]byte, *backup.Meta) {
	t.Helper()
	f, m, err := n.Backup(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != m.Size {
		t.Fatalf("file of %d bytes, meta says %d", len(b), m.Size)
	}
	return b, m
}

func digestOf(t *testing.T, n *Node) (uint64, backup.Sum) {
	t.Helper()
	idx, sum, err := n.Digest(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	return idx, sum
}

// waitDigests waits until every node of tc reports want.
func waitDigests(t *testing.T, tc *testCluster, want backup.Sum) {
	t.Helper()
	testutil.Poll(t, 15*time.Second, "every node to hold the backup's digest", func() bool {
		for _, n := range tc.all() {
			if _, sum := digestOf(t, n); sum != want {
				return false
			}
		}
		return true
	})
}

// A backup from the leader or a follower records the state's index,
// term, node and digest, and reads back whole; every node's digest at
// that index is the backup's.
func TestBackupFromLeaderAndFollower(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	fill(t, leader, "a")
	for _, n := range []*Node{leader, tc.followers()[0]} {
		b, m := takeBackup(t, n)
		rm, st, err := backup.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if rm.Node != n.ID() || rm.Index == 0 || rm.Term == 0 || rm.Digest != m.Digest || st.Index != rm.Index {
			t.Fatalf("%s: meta %+v", n.ID(), rm)
		}
		if rm.Counts.Keys != 5 || rm.Counts.Expires != 1 || rm.Counts.Users != 2 || len(rm.Counts.Layouts) != 3 {
			t.Fatalf("%s: counts %+v", n.ID(), rm.Counts)
		}
		for _, o := range tc.all() {
			idx, sum := digestOf(t, o)
			if idx != rm.Index || sum != rm.Digest {
				t.Fatalf("%s at %d has digest %s; the backup from %s at %d has %s", o.ID(), idx, sum, n.ID(), rm.Index, rm.Digest)
			}
		}
	}
}

// newSeededCluster is newTestCluster whose nodes' data directories are
// prepared by seed before they start.
func newSeededCluster(t *testing.T, size int, seed func(id, dir string)) *testCluster {
	t.Helper()
	return bootCluster(t, size, nil, seed)
}

// A new cluster restores a backup given to one follower, or to every
// node: each node ends with the backup's digest, and no node keeps a
// pending file.
func TestRestorePendingCluster(t *testing.T) {
	src := newTestCluster(t, 1, nil)
	fill(t, src.waitLeader(), "c")
	b, m := takeBackup(t, src.waitLeader())
	for _, holders := range []map[string]bool{{"n3": true}, {"n1": true, "n2": true, "n3": true}} {
		t.Run(fmt.Sprint(len(holders)), func(t *testing.T) {
			dirs := map[string]string{}
			tc := newSeededCluster(t, 3, func(id, dir string) {
				dirs[id] = dir
				if holders[id] {
					seedFile(t, dir, b)
				}
			})
			tc.waitLeader()
			waitDigests(t, tc, m.Digest)
			testutil.Poll(t, 15*time.Second, "no pending file left", func() bool {
				for _, dir := range dirs {
					if exists(filepath.Join(dir, pendingFile)) || exists(filepath.Join(dir, refusedFile)) {
						return false
					}
				}
				return true
			})
		})
	}
}

// A pending backup on a node whose cluster already holds other keys is
// not restored: it is set aside as restore.refused.
func TestRestorePendingRefusedWhenTheClusterHasData(t *testing.T) {
	src := newTestCluster(t, 1, nil)
	fill(t, src.waitLeader(), "r")
	b, _ := takeBackup(t, src.waitLeader())

	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	apply(t, leader, 0, "zadd", "mine", "1", "x")
	// A fourth node joins with a backup in its data directory.
	dir := tc.dir()
	seedFile(t, dir, b)
	n4 := tc.start("n4", dir)
	if err := leader.AddVoter("n4", string(tc.trans["n4"].LocalAddr())); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 15*time.Second, "the pending file set aside", func() bool {
		return !exists(filepath.Join(dir, pendingFile)) && exists(filepath.Join(dir, refusedFile))
	})
	if score(n4, "mine", "x") != "1" || score(n4, "r:std", "a") != "" {
		t.Fatal("n4 does not hold the cluster's own data")
	}
}

func seedFile(t *testing.T, dir string, b []byte) {
	t.Helper()
	if _, err := SeedRestore(dir, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A single node started on a seeded data directory serves the backup:
// same digest, and the pending file is gone.
func TestRestorePendingSingleNode(t *testing.T) {
	src := newTestCluster(t, 1, nil)
	fill(t, src.waitLeader(), "s")
	b, m := takeBackup(t, src.waitLeader())

	dir := t.TempDir()
	seedFile(t, dir, b)
	if _, err := SeedRestore(dir, bytes.NewReader(b[:len(b)-1])); !errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("a truncated backup was seeded: %v", err)
	}
	logs := &testutil.SyncBuffer{}
	n := startSingle(t, dir, LogStoreWAL, logs)
	idx, sum := digestOf(t, n)
	if sum != m.Digest || idx <= m.Index {
		t.Fatalf("restored node at %d has digest %s, backup at %d has %s\n%s", idx, sum, m.Index, m.Digest, logs.String())
	}
	if exists(filepath.Join(dir, pendingFile)) {
		t.Fatal("the pending file is still there")
	}
	if score(n, "s:std", "b") != "2.5" {
		t.Fatal("a member is missing")
	}
	// It writes on from there, and a restart keeps it.
	apply(t, n, 0, "zadd", "s:std", "9", "c")
	_, after := digestOf(t, n)
	n.Close()
	n = startSingle(t, dir, LogStoreWAL, logs)
	if _, again := digestOf(t, n); again != after || after == m.Digest {
		t.Fatal("the state after a restart differs")
	}
	// A data directory with Raft state is refused.
	n.Close()
	if _, err := SeedRestore(dir, bytes.NewReader(b)); err == nil {
		t.Fatal("a used data directory was seeded")
	}
}

// Online restore: refused into a cluster with keys, done with force (the
// old keys are gone), done into an empty cluster through a follower,
// which takes leadership; every node gets the backup's digest.
func TestRestoreOnline(t *testing.T) {
	src := newTestCluster(t, 1, nil)
	fill(t, src.waitLeader(), "src")
	b, m := takeBackup(t, src.waitLeader())

	tc := newTestCluster(t, 3, nil)
	f := tc.followers()[0]
	if _, err := f.Restore(context.Background(), bytes.NewReader(b), false); err != nil {
		t.Fatal(err)
	}
	if !f.IsLeader() {
		t.Fatal("the follower did not take leadership")
	}
	waitDigests(t, tc, m.Digest)

	leader := tc.waitLeader()
	apply(t, leader, 0, "zadd", "other", "1", "x")
	if _, err := leader.Restore(context.Background(), bytes.NewReader(b), false); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a cluster with keys: %v", err)
	}
	if _, err := leader.Restore(context.Background(), bytes.NewReader(b[:len(b)/2]), true); !errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("a truncated backup: %v", err)
	}
	before := leader.AppliedIndex()
	if _, err := leader.Restore(context.Background(), bytes.NewReader(b), true); err != nil {
		t.Fatal(err)
	}
	waitDigests(t, tc, m.Digest)
	if idx, _ := digestOf(t, leader); idx <= before {
		t.Fatalf("the index went back: %d after %d", idx, before)
	}
	if score(leader, "other", "x") != "" {
		t.Fatal("a key written before the forced restore survived")
	}
	// Writes go on, replicated as usual.
	apply(t, tc.waitLeader(), 0, "zadd", "after", "1", "x")
	testutil.Poll(t, 10*time.Second, "the write after the restore on every node", func() bool {
		for _, n := range tc.all() {
			if score(n, "after", "x") != "1" {
				return false
			}
		}
		return true
	})
}
