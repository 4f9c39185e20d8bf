package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
)

// Corrupt snapshots on a node whose state was installed past its log: a
// backup restored with GOBLIN RESTORE (restore.go) is installed at an
// index restoreIndexRoom past the log's last, as a follower's state sent
// by the leader is past its log. raft empties the wal (a monotonic store)
// first; bolt keeps the entries before it, so its log lacks the indexes
// between them and the snapshot. Neither log can rebuild such a state:
// the node refuses to start, saying what to do, when no snapshot from it
// on restores; it never replays the log across the gap (raft panicked
// there, "log not found") nor starts from a state older than the
// restore.

// restoredNode starts a node with the log store given and snapshot
// threshold (raft's trailing logs the same), writes m0..m99 (and takes
// a snapshot of its own after them when own is set), backs them up,
// writes x0..x29, restores the backup over them (FORCE), and writes
// m100..m119. It returns the node, open, and its data directory.
func restoredNode(t *testing.T, store LogStore, threshold uint64, own bool) (*Node, string) {
	t.Helper()
	dir := t.TempDir()
	logs := &testutil.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs of the node that restored:\n%s", logs.String())
		}
	})
	n := startNode(t, Config{DataDir: dir, LogStore: store, SnapshotThreshold: threshold,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "n1", Level: hclog.Info, Output: logs})})
	writeMembers(t, n, 0, 100)
	if own {
		snapshot(t, n)
	}
	b, _ := takeBackup(t, n)
	for i := range 30 {
		if err := addK(n, fmt.Sprint("x", i), i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.Restore(context.Background(), bytes.NewReader(b), true); err != nil {
		t.Fatal(err)
	}
	writeMembers(t, n, 100, 120)
	checkExactly(t, n, 120)
	restored := snapshotIDs(t, dir)[0]
	first, _ := n.stores.guard.FirstIndex()
	switch {
	case store == LogStoreBolt && first != 1:
		t.Fatalf("bolt's log starts at %d after the restore, not at its first entry", first)
	case store == LogStoreWAL && first <= restored.Index:
		t.Fatalf("the wal starts at %d after the restore at %d", first, restored.Index)
	}
	return n, dir
}

// wantRefusal is wantStartError, failing the test, not the binary, when
// the start panics.
func wantRefusal(t *testing.T, dir string, mentions ...string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("the start panicked: %v", r)
		}
	}()
	wantStartError(t, dir, mentions...)
}

// checkInPlace checks that the snapshots ids are still in
// snapshots/snapshots/ and that nothing was moved to snapshots/corrupt/.
func checkInPlace(t *testing.T, dir string, ids ...*raft.SnapshotMeta) {
	t.Helper()
	for _, m := range ids {
		if _, err := os.Stat(filepath.Join(dir, "snapshots", "snapshots", m.ID)); err != nil {
			t.Fatalf("snapshot %s was moved by a node that refused to start: %v", m.ID, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "snapshots", "corrupt")); len(ents) != 0 {
		t.Fatalf("a node that refused to start moved snapshots aside: %v", ents)
	}
}

var bothStores = []LogStore{LogStoreWAL, LogStoreBolt}

// TestRestoredSnapshotCorrupt: the restore's snapshot, the node's only
// one or newer than one of its own from before the restore, fails its
// checksum. The log cannot rebuild the restored state and an older one
// would lose it: the node refuses to start, naming the snapshot and what
// to do, and moves nothing, at every start. With the older snapshot
// corrupt instead, it starts from the restore's.
func TestRestoredSnapshotCorrupt(t *testing.T) {
	for _, store := range bothStores {
		for _, own := range []bool{false, true} {
			name := string(store) + "/only snapshot"
			if own {
				name = string(store) + "/with an older snapshot"
			}
			t.Run(name, func(t *testing.T) {
				n, dir := restoredNode(t, store, 64, own)
				n.Close()
				ids := snapshotIDs(t, dir)
				if want := map[bool]int{false: 1, true: 2}[own]; len(ids) != want {
					t.Fatalf("%d snapshots, want %d", len(ids), want)
				}
				corruptSnapshot(t, dir, ids[0].ID)
				for range 2 {
					wantRefusal(t, dir, "no snapshot could be restored", ids[0].ID+": CRC mismatch",
						"move the data directory", "restore its data directory from a backup")
					checkInPlace(t, dir, ids...)
				}
			})
		}
		t.Run(string(store)+"/older snapshot corrupt", func(t *testing.T) {
			n, dir := restoredNode(t, store, 64, true)
			n.Close()
			ids := snapshotIDs(t, dir)
			corruptSnapshot(t, dir, ids[1].ID)
			n, _ = startLogged(t, dir)
			checkExactly(t, n, 120)
			if idx, _ := lastSnapshot(n.Raft()); idx != ids[0].Index {
				t.Fatalf("restored the snapshot at %d, want the restore's, at %d", idx, ids[0].Index)
			}
		})
	}
}

// TestRestoredSnapshotCorruptLogEndsBefore: bolt's log holds the entries
// before the restore and none after it, as a node's that stopped right
// after a snapshot was installed past its log: nothing is missing from
// the log, but replaying it would start from the state before the
// restore. The node refuses to start.
func TestRestoredSnapshotCorruptLogEndsBefore(t *testing.T) {
	n, dir := restoredNode(t, LogStoreBolt, 64, false)
	id := snapshotIDs(t, dir)[0]
	last, _ := n.stores.guard.LastIndex()
	if err := n.stores.guard.base.DeleteRange(id.Index+1, last); err != nil {
		t.Fatal(err)
	}
	n.Close()
	corruptSnapshot(t, dir, id.ID)
	wantRefusal(t, dir, "no snapshot could be restored", id.ID+": CRC mismatch", "before snapshot "+id.ID, "move the data directory")
	checkInPlace(t, dir, id)
}

// TestSnapshotAfterRestoreCorrupt: restore, write, snapshot, write. With
// the newest snapshot corrupt the node starts from the restore's and the
// log after it, losing nothing; with both corrupt it refuses to start,
// naming both; with the restore's corrupt it starts from the newest. The
// log compacted as usual (trailing logs 64), and kept whole (trailing
// logs past the restore's index room), where bolt's still starts at its
// first entry, before the gap.
func TestSnapshotAfterRestoreCorrupt(t *testing.T) {
	for _, store := range bothStores {
		for _, threshold := range []uint64{64, 2 * restoreIndexRoom} {
			for _, which := range []string{"newest", "both", "restore's"} {
				t.Run(fmt.Sprintf("%s/trailing %d/%s corrupt", store, threshold, which), func(t *testing.T) {
					n, dir := restoredNode(t, store, threshold, false)
					snapshot(t, n)
					writeMembers(t, n, 120, 140)
					first, _ := n.stores.guard.FirstIndex()
					n.Close()
					ids := snapshotIDs(t, dir)
					if len(ids) != 2 {
						t.Fatalf("%d snapshots, want 2", len(ids))
					}
					if store == LogStoreBolt && threshold > restoreIndexRoom && first != 1 {
						t.Fatalf("bolt's log starts at %d, not at its first entry", first)
					}
					newest, restored := ids[0], ids[1]
					switch which {
					case "newest":
						corruptSnapshot(t, dir, newest.ID)
						n, _ = startLogged(t, dir)
						checkExactly(t, n, 140)
						if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", newest.ID)); err != nil {
							t.Fatalf("the corrupt snapshot was not moved aside: %v", err)
						}
					case "both":
						corruptSnapshot(t, dir, newest.ID)
						corruptSnapshot(t, dir, restored.ID)
						wantRefusal(t, dir, "no snapshot could be restored", newest.ID+": CRC mismatch", restored.ID+": CRC mismatch",
							"move the data directory")
						checkInPlace(t, dir, ids...)
					case "restore's":
						corruptSnapshot(t, dir, restored.ID)
						n, _ = startLogged(t, dir)
						checkExactly(t, n, 140)
						if idx, _ := lastSnapshot(n.Raft()); idx != newest.Index {
							t.Fatalf("restored the snapshot at %d, want the newest, at %d", idx, newest.Index)
						}
					}
				})
			}
		}
	}
}

// TestSnapshotsAfterRestoreReaped: restore, then two snapshots of the
// node's own, which reap the restore's; bolt's log, kept whole, still
// holds the entries before the restore and lacks those it replaced.
// Both snapshots corrupt: the log cannot be replayed across the gap the
// restore left, and no snapshot names it any more: the node refuses to
// start.
func TestSnapshotsAfterRestoreReaped(t *testing.T) {
	for _, store := range bothStores {
		t.Run(string(store), func(t *testing.T) {
			n, dir := restoredNode(t, store, 2*restoreIndexRoom, false)
			snapshot(t, n)
			writeMembers(t, n, 120, 130)
			snapshot(t, n)
			writeMembers(t, n, 130, 140)
			n.Close()
			ids := snapshotIDs(t, dir)
			for _, m := range ids {
				corruptSnapshot(t, dir, m.ID)
			}
			wantRefusal(t, dir, "no snapshot could be restored", ids[0].ID, ids[1].ID, "move the data directory")
			checkInPlace(t, dir, ids...)
		})
	}
}

// TestRestoredSnapshotGone: the restore's snapshot, the node's only one,
// moved out of the store: with bolt the log from its first entry lacks the entries
// the restore replaced; with the wal it starts after them. The node
// refuses to start rather than panic or start from the state before the
// restore.
func TestRestoredSnapshotGone(t *testing.T) {
	for _, store := range bothStores {
		t.Run(string(store), func(t *testing.T) {
			n, dir := restoredNode(t, store, 64, false)
			n.Close()
			id := snapshotIDs(t, dir)[0].ID
			if err := os.MkdirAll(filepath.Join(dir, "snapshots", "corrupt"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "snapshots", "snapshots", id), filepath.Join(dir, "snapshots", "corrupt", id)); err != nil {
				t.Fatal(err)
			}
			mention := map[LogStore]string{
				LogStoreWAL:  "the Raft log starts at index", // the wal starts after the restore
				LogStoreBolt: "there is no snapshot, and the Raft log (indexes 1 to",
			}[store]
			wantRefusal(t, dir, mention, "entries", "move the data directory")
		})
	}
}
