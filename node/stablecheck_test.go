package node

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// A single node whose raft-stable.db is gone starts again with its term
// taken from its log, and keeps its data; its term never goes back.
func TestStableStoreLostOnSingleVoter(t *testing.T) {
	for _, how := range []string{"deleted", "emptied"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
			writeMembers(t, n, 0, 100)
			snapshot(t, n)
			writeMembers(t, n, 100, 120)
			term := n.Raft().CurrentTerm()
			n.Close()
			p := filepath.Join(dir, "raft-stable.db")
			if how == "deleted" {
				os.Remove(p)
			} else if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
			n = startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 120)
			if got := n.Raft().CurrentTerm(); got < term {
				t.Fatalf("term %d after the restart, was %d", got, term)
			}
		})
	}
}

// A node whose configuration holds other voters is refused: without its
// vote it could vote twice in one term.
func TestStableStoreLostInCluster(t *testing.T) {
	dir := t.TempDir()
	n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
	writeMembers(t, n, 0, 10)
	// The entry that adds a voter is in the log even though the voter
	// never answers: the latest configuration has two voters.
	err := n.Raft().AddVoter("n2", raft.ServerAddress("n2"), 0, 200*time.Millisecond).Error()
	f := n.Raft().GetConfiguration()
	if f.Error() != nil || len(f.Configuration().Servers) != 2 {
		t.Fatalf("configuration %v %v (adding: %v), want two servers", f.Configuration(), f.Error(), err)
	}
	n.Close()
	os.Remove(filepath.Join(dir, "raft-stable.db"))
	wantStartError(t, dir, "raft-stable.db", "vote twice", "Move the data directory aside")
}

// A term older than the log's newest (a damaged value) is treated as no
// term: set again from the log on the only voter, refused in a cluster.
func TestStableStoreTermOlderThanLog(t *testing.T) {
	setTerm := func(t *testing.T, dir string, term uint64) {
		s, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft-stable.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SetUint64(keyCurrentTerm, term); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("single voter", func(t *testing.T) {
		dir := t.TempDir()
		n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
		writeMembers(t, n, 0, 10)
		n.Close()
		n = startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil) // a new term
		writeMembers(t, n, 10, 20)
		term := n.Raft().CurrentTerm()
		n.Close()
		setTerm(t, dir, 1)
		n = startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
		checkMembers(t, n, 20)
		if got := n.Raft().CurrentTerm(); got < term {
			t.Fatalf("term %d after the restart, was %d", got, term)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		dir := t.TempDir()
		n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
		writeMembers(t, n, 0, 10)
		n.Raft().AddVoter("n2", raft.ServerAddress("n2"), 0, 200*time.Millisecond).Error()
		term := n.Raft().CurrentTerm()
		n.Close()
		if term < 2 {
			t.Fatalf("term %d: nothing older to write", term)
		}
		setTerm(t, dir, term-1)
		wantStartError(t, dir, "raft-stable.db", fmt.Sprintf("holds term %d, older", term-1), "vote twice", "Move the data directory aside")
	})
}
