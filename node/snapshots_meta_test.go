package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
)

// metaDamages are the ways a snapshot's meta.json is found unreadable:
// raft's store then lists the snapshot no more; or damaged, still valid
// JSON that raft would believe, which its checksum (meta.sum) tells.
var metaDamages = []struct {
	name   string
	damage func(b []byte) []byte // nil: the file is deleted
}{
	{"deleted", nil},
	{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
	{"not JSON", func(b []byte) []byte { return bytes.Repeat([]byte{0xa5}, len(b)) }},
	{"empty", func([]byte) []byte { return []byte{} }},
	{"unknown version", func(b []byte) []byte { return bytes.Replace(b, []byte(`"Version":1,`), []byte(`"Version":99,`), 1) }},
	{"voter made nonvoter", func(b []byte) []byte { return bytes.Replace(b, []byte(`"Suffrage":0`), []byte(`"Suffrage":1`), 1) }},
	{"bit flipped in an ID", func(b []byte) []byte {
		i := bytes.Index(b, []byte(`"ID":"`)) + len(`"ID":"`)
		return append(append(append([]byte{}, b[:i]...), b[i]^1), b[i+1:]...)
	}},
}

// damageMeta damages the meta.json of snapshot id in the data directory
// dir.
func damageMeta(t *testing.T, dir, id string, damage func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, "snapshots", "snapshots", id, "meta.json")
	if damage == nil {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	d := damage(b)
	if bytes.Equal(d, b) {
		t.Fatalf("%s unchanged by the damage: %s", p, b)
	}
	if err := os.WriteFile(p, d, 0o644); err != nil {
		t.Fatal(err)
	}
}

// startLogged starts a single-voter node on dir, logging into logs, which
// the test prints if it fails.
func startLogged(t *testing.T, dir string) (*Node, *testutil.SyncBuffer) {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node logs:\n%s", logs.String())
		}
	})
	n := startNode(t, Config{DataDir: dir, Logger: hclog.New(&hclog.LoggerOptions{Name: "n1", Level: hclog.Info, Output: logs})})
	return n, logs
}

// checkExactly checks that n's k holds m0..m<to-1>, each mi with score i,
// and nothing else: what was written, compared whole.
func checkExactly(t *testing.T, n *Node, to int) {
	t.Helper()
	checkMembers(t, n, to)
	var size int
	n.View(func(ks *keyspace.Keyspace, now int64) {
		if e := ks.DB(0).Get([]byte("k"), now); e != nil {
			size = e.Z.Len()
		}
	})
	if size != to {
		t.Fatalf("k holds %d members, %d were written", size, to)
	}
	for i := range to {
		if got := score(n, "k", fmt.Sprint("m", i)); got != fmt.Sprint(i) {
			t.Fatalf("m%d has score %q, %d was written", i, got, i)
		}
	}
}

// checkSetAside checks that snapshot id is in snapshots/corrupt/ and no
// longer among the snapshots, and that a line of logs names it, says it
// was moved aside and why (its meta.json).
func checkSetAside(t *testing.T, dir, id string, logs *testutil.SyncBuffer) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", id)); err != nil {
		t.Errorf("the snapshot was not moved aside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshots", "snapshots", id)); err == nil {
		t.Errorf("the snapshot is still in snapshots/snapshots/")
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, id) && strings.Contains(l, "moved aside") && strings.Contains(l, "meta.json") {
			t.Logf("logged: %s", l)
			return
		}
	}
	t.Errorf("no log line names %s, says it was moved aside and that its meta.json cannot be read", id)
}

// TestSnapshotMetaUnreadable: a newest snapshot whose meta.json cannot be
// read is skipped by raft's store; it is moved aside like any corrupt
// snapshot, and the node starts from the older snapshot and the log,
// losing nothing. Both log stores, each kind of damage; then the node
// takes snapshots and restarts as usual.
func TestSnapshotMetaUnreadable(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		for _, d := range metaDamages {
			t.Run(string(store)+"/"+d.name, func(t *testing.T) {
				dir := twoSnapshots(t, store)
				metas := snapshotIDs(t, dir)
				newest, older := metas[0], metas[1]
				damageMeta(t, dir, newest.ID, d.damage)
				n, logs := startLogged(t, dir)
				checkExactly(t, n, 250)
				checkSetAside(t, dir, newest.ID, logs)
				if got := n.fsm.Applied(); got < newest.Index {
					t.Fatalf("applied index %d after the restart, below the damaged snapshot's %d", got, newest.Index)
				}
				if ids := snapshotIDs(t, dir); len(ids) != 1 || ids[0].ID != older.ID {
					t.Fatalf("snapshots after the restart: %v, want the older one alone", ids)
				}
				writeMembers(t, n, 250, 300)
				snapshot(t, n)
				n.Close()
				n, logs = startLogged(t, dir)
				checkExactly(t, n, 300)
				if strings.Contains(logs.String(), "failed to read metadata") {
					t.Fatalf("raft still finds an unreadable snapshot:\n%s", logs)
				}
			})
		}
	}
}

// TestOlderSnapshotMetaUnreadable: an older snapshot whose meta.json
// cannot be read is moved aside too (raft would keep it for ever: it
// reaps only the snapshots it lists); the newest is restored.
func TestOlderSnapshotMetaUnreadable(t *testing.T) {
	dir := twoSnapshots(t, LogStoreBolt)
	metas := snapshotIDs(t, dir)
	damageMeta(t, dir, metas[1].ID, nil)
	n, logs := startLogged(t, dir)
	checkExactly(t, n, 250)
	checkSetAside(t, dir, metas[1].ID, logs)
	if idx, _ := lastSnapshot(n.Raft()); idx != metas[0].Index {
		t.Fatalf("restored the snapshot at %d, want the newest, at %d", idx, metas[0].Index)
	}
}

// TestOnlySnapshotMetaUnreadable: a node's only snapshot, with its
// meta.json unreadable. A node that took it itself kept the whole log:
// the snapshot is moved aside and the log replayed. Where the log no
// longer holds what the snapshot holds (a backup restored into the node
// with GOBLIN RESTORE, as a follower's state installed by the leader; a
// log emptied since), the node refuses to start and says what to do,
// rather than start without the snapshot's data.
func TestOnlySnapshotMetaUnreadable(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		t.Run(string(store)+"/own snapshot", func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, store, FsyncAlways, nil)
			writeMembers(t, n, 0, 100)
			snapshot(t, n)
			writeMembers(t, n, 100, 120)
			n.Close()
			id := snapshotIDs(t, dir)[0].ID
			damageMeta(t, dir, id, func([]byte) []byte { return nil })
			n, logs := startLogged(t, dir)
			checkExactly(t, n, 120)
			checkSetAside(t, dir, id, logs)
		})
		t.Run(string(store)+"/restored backup", func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, store, FsyncAlways, nil)
			writeMembers(t, n, 0, 100)
			b, _ := takeBackup(t, n)
			for i := range 30 {
				if err := addK(n, fmt.Sprint("x", i), i); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := n.Restore(context.Background(), bytes.NewReader(b), true); err != nil {
				t.Fatal(err)
			}
			checkExactly(t, n, 100)
			n.Close()
			ids := snapshotIDs(t, dir)
			if len(ids) != 1 {
				t.Fatalf("%d snapshots, want the restore's alone", len(ids))
			}
			damageMeta(t, dir, ids[0].ID, nil)
			wantStartError(t, dir, ids[0].ID, "meta.json", "move the data directory")
			if _, err := os.Stat(filepath.Join(dir, "snapshots", "snapshots", ids[0].ID)); err != nil {
				t.Fatalf("a node refused to start moved its snapshot: %v", err)
			}
		})
	}
	t.Run("log emptied", func(t *testing.T) {
		dir := t.TempDir()
		n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
		writeMembers(t, n, 0, 100)
		snapshot(t, n)
		first, _ := n.stores.guard.FirstIndex()
		last, _ := n.stores.guard.LastIndex()
		if err := n.stores.guard.base.DeleteRange(first, last); err != nil {
			t.Fatal(err)
		}
		n.Close()
		id := snapshotIDs(t, dir)[0].ID
		damageMeta(t, dir, id, func(b []byte) []byte { return b[:len(b)-10] })
		wantStartError(t, dir, id, "meta.json", "move the data directory")
	})
}

// TestSnapshotMetaUnreadableOlderCorrupt: the newest snapshot's meta.json
// unreadable and the older snapshot corrupt. The wal, holding the log
// from its start, replays it; the compacted bolt log cannot rebuild a
// state, and the refusal names both snapshots.
func TestSnapshotMetaUnreadableOlderCorrupt(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		t.Run(string(store), func(t *testing.T) {
			dir := twoSnapshots(t, store)
			metas := snapshotIDs(t, dir)
			damageMeta(t, dir, metas[0].ID, nil)
			corruptSnapshot(t, dir, metas[1].ID)
			if store == LogStoreBolt {
				wantStartError(t, dir, "no snapshot could be restored", metas[1].ID, metas[0].ID+": its meta.json cannot be read", "move the data directory")
				return
			}
			n, logs := startLogged(t, dir)
			checkExactly(t, n, 250)
			checkSetAside(t, dir, metas[0].ID, logs)
			if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", metas[1].ID)); err != nil {
				t.Fatalf("the corrupt older snapshot was not moved aside: %v", err)
			}
		})
	}
}

// TestSnapshotDirectoryNotASnapshot: a directory among the snapshots
// that raft cannot read and whose name gives no index cannot be judged:
// the node refuses to start until it is moved out.
func TestSnapshotDirectoryNotASnapshot(t *testing.T) {
	dir := twoSnapshots(t, LogStoreWAL)
	stray := filepath.Join(dir, "snapshots", "snapshots", "copy-of-a-snapshot")
	if err := os.Mkdir(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	wantStartError(t, dir, "copy-of-a-snapshot", "its meta.json cannot be read (it is missing)", "Move it out")
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	n, _ := startLogged(t, dir)
	checkExactly(t, n, 250)
}

// TestSnapshotWithoutChecksum: a snapshot without meta.sum (written by
// an earlier build, or a crash right after raft wrote it) is restored as
// it is; snapshots written from then on have one.
func TestSnapshotWithoutChecksum(t *testing.T) {
	dir := twoSnapshots(t, LogStoreWAL)
	metas := snapshotIDs(t, dir)
	for _, m := range metas {
		p := filepath.Join(dir, "snapshots", "snapshots", m.ID, metaSumName)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a snapshot was written without its checksum: %v", err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	n, logs := startLogged(t, dir)
	checkExactly(t, n, 250)
	if ids := snapshotIDs(t, dir); len(ids) != 2 {
		t.Fatalf("snapshots after the restart: %v, want both", ids)
	}
	if strings.Contains(logs.String(), "moved aside") {
		t.Fatalf("a snapshot without a checksum was moved aside:\n%s", logs)
	}
	if got := n.fsm.Applied(); got < metas[0].Index {
		t.Fatalf("applied index %d, below the newest snapshot's %d", got, metas[0].Index)
	}
	writeMembers(t, n, 250, 300)
	snapshot(t, n)
	newest := snapshotIDs(t, dir)[0]
	if _, err := os.Stat(filepath.Join(dir, "snapshots", "snapshots", newest.ID, metaSumName)); err != nil {
		t.Fatalf("the new snapshot has no checksum: %v", err)
	}
}
