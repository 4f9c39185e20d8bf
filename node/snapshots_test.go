package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// writeMembers adds members m<from>..m<to-1> to k.
func writeMembers(t *testing.T, n *Node, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := addK(n, fmt.Sprint("m", i), i); err != nil {
			t.Fatal(err)
		}
	}
}

func checkMembers(t *testing.T, n *Node, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.ReadBarrier(ctx, false); err != nil {
		t.Fatal(err)
	}
	for i := range to {
		if score(n, "k", fmt.Sprint("m", i)) == "" {
			t.Fatalf("m%d is missing", i)
		}
	}
}

func snapshot(t *testing.T, n *Node) {
	t.Helper()
	if err := n.Raft().Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
}

// snapshotIDs lists the retained snapshots of a data directory, newest
// first.
func snapshotIDs(t *testing.T, dir string) []*raft.SnapshotMeta {
	t.Helper()
	fs, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "snapshots"), snapshotRetain, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	all, err := fs.List()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func corruptSnapshot(t *testing.T, dir, id string) {
	t.Helper()
	p := filepath.Join(dir, "snapshots", "snapshots", id, "state.bin")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// twoSnapshots writes m0..m249 on a fresh node with two snapshots on the
// way, and closes it.
func twoSnapshots(t *testing.T, store LogStore) string {
	t.Helper()
	dir := t.TempDir()
	n := startFaulty(t, dir, store, FsyncAlways, nil)
	writeMembers(t, n, 0, 100)
	snapshot(t, n)
	writeMembers(t, n, 100, 200)
	snapshot(t, n)
	writeMembers(t, n, 200, 250)
	if store == LogStoreBolt { // the wal keeps whole segments
		if first, _ := n.stores.guard.FirstIndex(); first <= 1 {
			t.Fatalf("the log was not compacted (first index %d)", first)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if ids := snapshotIDs(t, dir); len(ids) != 2 {
		t.Fatalf("%d snapshots, want 2", len(ids))
	}
	return dir
}

// TestCorruptSnapshotFallsBack: with the newest snapshot corrupt, the
// node starts from the older one and the log it kept, losing nothing,
// and moves the corrupt one aside. Both log stores.
func TestCorruptSnapshotFallsBack(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		t.Run(string(store), func(t *testing.T) {
			dir := twoSnapshots(t, store)
			newest := snapshotIDs(t, dir)[0].ID
			corruptSnapshot(t, dir, newest)
			n := startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 250)
			if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", newest)); err != nil {
				t.Fatalf("the corrupt snapshot was not moved aside: %v", err)
			}
			writeMembers(t, n, 250, 300)
			snapshot(t, n)
			n.Close()
			n = startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 300)
		})
	}
}

// TestSnapshotMetaIndexDamaged: a snapshot without meta.sum (an earlier
// build's) has nothing to check its meta.json against; a newest such
// snapshot whose metadata gives another index than its state records
// (restored, it would skip the entries between the two, or apply them a
// second time) is treated as corrupt: the node starts from the older one
// and the log, losing nothing.
func TestSnapshotMetaIndexDamaged(t *testing.T) {
	for _, delta := range []int64{+4, -1} {
		t.Run(fmt.Sprint(delta), func(t *testing.T) {
			dir := twoSnapshots(t, LogStoreWAL)
			newest := snapshotIDs(t, dir)[0]
			p := filepath.Join(dir, "snapshots", "snapshots", newest.ID, "meta.json")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			old := fmt.Sprintf(`"Index":%d,`, newest.Index)
			if !strings.Contains(string(b), old) {
				t.Fatalf("%s holds no %s: %s", p, old, b)
			}
			b = []byte(strings.Replace(string(b), old, fmt.Sprintf(`"Index":%d,`, int64(newest.Index)+delta), 1))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(filepath.Dir(p), metaSumName)); err != nil {
				t.Fatal(err)
			}
			n := startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 250)
			if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", newest.ID)); err != nil {
				t.Fatalf("the snapshot with a damaged index was not moved aside: %v", err)
			}
			if got := n.fsm.Applied(); got < newest.Index {
				t.Fatalf("applied index %d after the restart, below the snapshot's %d", got, newest.Index)
			}
		})
	}
}

// TestOnlySnapshotCorrupt: with one snapshot the log is whole, so a
// corrupt snapshot is moved aside and the log replayed.
func TestOnlySnapshotCorrupt(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		t.Run(string(store), func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, store, FsyncAlways, nil)
			writeMembers(t, n, 0, 100)
			snapshot(t, n)
			writeMembers(t, n, 100, 120)
			n.Close()
			ids := snapshotIDs(t, dir)
			corruptSnapshot(t, dir, ids[0].ID)
			n = startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 120)
			if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", ids[0].ID)); err != nil {
				t.Fatalf("the corrupt snapshot was not moved aside: %v", err)
			}
		})
	}
}

// TestOnlySnapshotRenamed: a snapshot directory whose name is not the ID
// its meta.json gives (renamed, or the ID damaged) cannot be opened by
// raft; the log is whole, so the snapshot is found by its meta.json,
// moved aside, and the log replayed.
func TestOnlySnapshotRenamed(t *testing.T) {
	dir := t.TempDir()
	n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	writeMembers(t, n, 0, 100)
	snapshot(t, n)
	writeMembers(t, n, 100, 120)
	n.Close()
	id := snapshotIDs(t, dir)[0].ID
	snaps := filepath.Join(dir, "snapshots", "snapshots")
	if err := os.Rename(filepath.Join(snaps, id), filepath.Join(snaps, "junk")); err != nil {
		t.Fatal(err)
	}
	n = startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	checkMembers(t, n, 120)
	if _, err := os.Stat(filepath.Join(dir, "snapshots", "corrupt", "junk")); err != nil {
		t.Fatalf("the renamed snapshot was not moved aside: %v", err)
	}
}

// TestCorruptSnapshotNoFallback: when no snapshot restores and the log
// cannot rebuild an older state (both snapshots corrupt; or, as a data
// directory compacted by an earlier build can be, the log compacted past
// the older snapshot), the node refuses to start with what to do, rather
// than panic at every start.
func TestCorruptSnapshotNoFallback(t *testing.T) {
	t.Run("bolt/both corrupt", func(t *testing.T) {
		dir := twoSnapshots(t, LogStoreBolt)
		for _, m := range snapshotIDs(t, dir) {
			corruptSnapshot(t, dir, m.ID)
		}
		wantStartError(t, dir, "no snapshot could be restored", "move the data directory")
	})
	// The wal deletes whole segments only, so a small log still starts at
	// index 1: it is replayed.
	t.Run("wal/both corrupt", func(t *testing.T) {
		dir := twoSnapshots(t, LogStoreWAL)
		for _, m := range snapshotIDs(t, dir) {
			corruptSnapshot(t, dir, m.ID)
		}
		n := startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
		checkMembers(t, n, 250)
	})
	t.Run("bolt/compacted past the older snapshot", func(t *testing.T) {
		dir := t.TempDir()
		n := startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
		writeMembers(t, n, 0, 100)
		snapshot(t, n)
		writeMembers(t, n, 100, 200)
		snapshot(t, n)
		writeMembers(t, n, 200, 210)
		ids := snapshotIDs(t, dir)
		first, _ := n.stores.guard.FirstIndex()
		if err := n.stores.guard.base.DeleteRange(first, ids[0].Index-5); err != nil {
			t.Fatal(err)
		}
		n.Close()
		corruptSnapshot(t, dir, ids[0].ID)
		wantStartError(t, dir, "no snapshot could be restored", ids[0].ID)
	})
}

func wantStartError(t *testing.T, dir string, mentions ...string) {
	t.Helper()
	_, trans := raft.NewInmemTransport("")
	n, err := New(Config{ID: "n1", DataDir: dir, Transport: trans, Logger: hclog.NewNullLogger()})
	if err == nil {
		n.Close()
		t.Fatal("the node started")
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("start error %q does not mention %q", err, m)
		}
	}
	t.Logf("start refused: %v", err)
}

// TestMissingLog: a data directory whose log is gone, or lacks the
// entries after the newest snapshot, is refused at start.
func TestMissingLog(t *testing.T) {
	dir := t.TempDir()
	n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	writeMembers(t, n, 0, 10)
	n.Close()
	os.RemoveAll(filepath.Join(dir, walDir))
	wantStartError(t, dir, "the log is missing")

	// Every file of the log removed, its directory kept, with a snapshot
	// to start from: the entries after the snapshot would be lost.
	dir = t.TempDir()
	n = startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	writeMembers(t, n, 0, 100)
	snapshot(t, n)
	writeMembers(t, n, 100, 120)
	n.Close()
	files, _ := filepath.Glob(filepath.Join(dir, walDir, "*"))
	for _, f := range files {
		os.Remove(f)
	}
	wantStartError(t, dir, "an empty Raft log", "the log is missing")

	// The log's end lost, back to before the newest snapshot.
	dir = t.TempDir()
	n = startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	writeMembers(t, n, 0, 100)
	snapshot(t, n)
	writeMembers(t, n, 100, 120)
	last, _ := n.stores.guard.LastIndex()
	snap := snapshotIDs(t, dir)[0].Index
	if err := n.stores.guard.base.DeleteRange(snap-10, last); err != nil {
		t.Fatal(err)
	}
	n.Close()
	wantStartError(t, dir, fmt.Sprintf("the Raft log ends at index %d, before the newest snapshot", snap-11), "the end of the log is missing")

	dir = t.TempDir()
	n = startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
	writeMembers(t, n, 0, 100)
	snapshot(t, n)
	writeMembers(t, n, 100, 120)
	last, _ = n.stores.guard.LastIndex()
	snap = snapshotIDs(t, dir)[0].Index
	if err := n.stores.guard.base.DeleteRange(1, snap+5); err != nil {
		t.Fatal(err)
	}
	n.Close()
	if last <= snap+5 {
		t.Fatalf("log ends at %d, snapshot at %d", last, snap)
	}
	wantStartError(t, dir, "are missing")
}

// TestSnapshotDiskFull: snapshots on a full file system (a tmpfs mounted
// on the snapshot directory) fail, show in the status, keep the whole
// log, and leave no partial snapshot; writes go on; once there is room a
// snapshot succeeds.
func TestSnapshotDiskFull(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "snapshots")
	testutil.MountTmpfs(t, mnt, 64<<10)
	n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	big := strings.Repeat("x", 200)
	for i := range 1000 {
		if err := addK(n, fmt.Sprint(big, i), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Raft().Snapshot().Error(); err == nil {
		t.Fatal("a snapshot larger than its file system succeeded")
	}
	st := n.Status()
	if st.SnapshotErr == nil || !strings.Contains(st.SnapshotErr.Error(), "no space left") {
		t.Fatalf("status snapshot error: %v", st.SnapshotErr)
	}
	if first, _ := n.stores.guard.FirstIndex(); first != 1 {
		t.Fatalf("log compacted to %d after a failed snapshot", first)
	}
	ents, _ := os.ReadDir(filepath.Join(mnt, "snapshots"))
	if len(ents) != 0 {
		t.Fatalf("left in the snapshot directory: %v", ents)
	}
	if err := addK(n, "during", 1); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=16m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	snapshot(t, n)
	st = n.Status()
	if st.SnapshotErr != nil || !st.SnapshotErrSince.IsZero() || st.LastSnapshot.IsZero() {
		t.Fatalf("status after a snapshot succeeded: %v since %v, last %v", st.SnapshotErr, st.SnapshotErrSince, st.LastSnapshot)
	}
	n.Close()
	n = startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	if score(n, "k", "during") == "" {
		t.Fatal("write lost")
	}
}

// A named pipe in place of a snapshot's meta.json or state.bin is
// refused: raft would wait forever reading it.
func TestSnapshotFileNotRegular(t *testing.T) {
	for _, name := range []string{"meta.json", "state.bin"} {
		dir := t.TempDir()
		n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
		writeMembers(t, n, 0, 50)
		snapshot(t, n)
		n.Close()
		p := filepath.Join(dir, "snapshots", "snapshots", snapshotIDs(t, dir)[0].ID, name)
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		wantStartError(t, dir, p+" is not a regular file")
	}
}
