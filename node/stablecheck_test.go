package node

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
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
