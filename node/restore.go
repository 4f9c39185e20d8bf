package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/backup"
	"github.com/goblindb/goblin/internal/durable"
	"github.com/goblindb/goblin/raftfsm"
)

// Restoring a backup.
//
// A backup becomes a cluster's state through hashicorp/raft's user
// restore (Raft.Restore) on the leader: the leader writes the backup's
// snapshot into its snapshot store at an index past its log, installs it
// in its state machine, and replicates it to the followers by
// InstallSnapshot, as it would to a follower that fell behind. Every node
// then holds exactly the backed-up state, at the same index.
//
// There are two ways in:
//
//   - Offline, into a new node or cluster: SeedRestore (goblind restore
//     --data) verifies the file and leaves it in the data directory as
//     restore.pending. The first leader that holds such a file and finds
//     the state without keys restores it while it becomes leader, after
//     its term's barrier and before it serves anything, so no client
//     write and no operator ACL configuration is applied before the
//     restore. A follower holding the file, in a cluster whose state is
//     still empty, asks the leader to hand it leadership. A node that
//     finds the state already holding keys retires its file: deleted if
//     the state has the backup's digest (another node restored the same
//     file), kept as restore.refused otherwise, with an error logged.
//   - Online, into a running cluster: Restore (GOBLIN RESTORE), on the
//     leader; a follower first takes leadership. A cluster that holds
//     keys is refused with ErrNotEmpty unless the caller forces it.
//
// The state installed is the backup's with two changes that no reply or
// digest shows: its index is the one Raft installs it at (never below
// the index the cluster had reached), and every key counts as modified
// there, so a transaction that WATCHed a key before the restore fails.

// The files of a pending restore in the data directory.
const (
	pendingFile = "restore.pending"
	refusedFile = "restore.refused"
)

// Errors of restores.
var (
	// ErrNotEmpty: the cluster's state holds keys, and the restore was
	// not forced.
	ErrNotEmpty = errors.New("the cluster holds data")
	// ErrRestoring: another restore is running on this node.
	ErrRestoring = errors.New("a restore is already running")
)

// restoreRetry spaces out a leader's attempts to restore a pending file
// that failed (Raft refuses while a configuration change is in flight),
// and a follower's requests for leadership.
const restoreRetry = 3 * time.Second

// pendingState is the Node's part of restores: the pending file, and
// whether a restore (or the retirement of a pending file) runs.
type pendingState struct {
	pending   atomic.Pointer[pendingRestore]
	restoring atomic.Bool
}

// pendingRestore is the backup waiting in the data directory.
type pendingRestore struct {
	path string
	meta *backup.Meta
}

// SeedRestore verifies the backup r and writes it into dataDir as the
// pending restore of the node that will start there. It refuses a data
// directory that already holds Raft state (a node of some cluster).
func SeedRestore(dataDir string, r io.Reader) (*backup.Meta, error) {
	has, err := HasRaftState(dataDir)
	if err != nil {
		return nil, err
	}
	if has {
		return nil, fmt.Errorf("%s holds a node's Raft state: restore into a new data directory, or restore into the running cluster (GOBLIN RESTORE)", dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dataDir, pendingFile+".*.tmp")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	m, _, err := backup.Read(io.TeeReader(r, bw))
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dataDir, pendingFile)); err != nil {
		return nil, err
	}
	durable.SyncDir(dataDir) // the rename is done; a failed sync only weakens it
	return m, nil
}

// HasRaftState reports whether dir holds Raft state: a term, a log entry
// or a snapshot.
func HasRaftState(dir string) (bool, error) {
	found := false
	for _, name := range []string{boltLogFile, walDir, "raft-stable.db", "snapshots"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			found = true
		}
	}
	if !found {
		return false, nil
	}
	st, err := openStores(dir, FsyncAlways, LogStoreAuto, false, nil, hclog.NewNullLogger())
	if err != nil {
		return false, err
	}
	defer st.close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "snapshots"), 2, hclog.NewNullLogger())
	if err != nil {
		return false, err
	}
	return raft.HasExistingState(st.logStore(), st.stableStore(), snaps)
}

// loadPendingRestore looks for a pending restore in the data directory
// and, if one is there, starts the loop that sees it through.
func (n *Node) loadPendingRestore() {
	path := filepath.Join(n.cfg.DataDir, pendingFile)
	f, err := os.Open(path)
	if err != nil {
		return
	}
	m, err := backup.ReadMeta(bufio.NewReader(f))
	f.Close()
	if err != nil {
		n.log.Error("the pending restore is not a readable backup: it is left aside", "file", path, "error", err)
		n.setAside(path)
		return
	}
	n.pending.Store(&pendingRestore{path: path, meta: m})
	n.log.Info("a backup waits to be restored", "file", path, "index", m.Index, "digest", m.Digest.String(),
		"from", m.Node, "keys", m.Counts.Keys, "members", m.Counts.Members)
	n.wg.Add(1)
	go n.pendingLoop()
}

// pendingLoop sees a pending restore through on a node that is not the
// leader, or whose restore failed while it became leader.
func (n *Node) pendingLoop() {
	defer n.wg.Done()
	t := time.NewTicker(restoreRetry / 6)
	defer t.Stop()
	var last, waiting time.Time
	for n.pending.Load() != nil {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		switch {
		case n.Ready():
			if time.Since(last) >= restoreRetry {
				last = time.Now()
				n.restorePending()
			}
		case !n.stateEmpty():
			n.retirePending()
		case n.peers != nil && !n.IsLeader() && n.LeaderID() != "":
			// A new cluster whose leader has not restored a backup: after
			// giving it the time to (it may hold one too), this node
			// takes leadership and restores its own.
			if waiting.IsZero() {
				waiting = time.Now()
			}
			if time.Since(waiting) >= restoreRetry && time.Since(last) >= restoreRetry {
				last = time.Now()
				n.log.Info("a backup waits to be restored here: asking the leader for leadership", "leader", n.LeaderID())
				if err := n.TransferLeadership(n.cfg.ID); err != nil {
					n.log.Warn("asking for leadership to restore failed; will ask again", "error", err)
				}
			}
		}
	}
}

// restorePending restores the pending backup if the state has no keys,
// or retires it. It runs on the leader, while it becomes leader (before
// reads and writes are served) and from pendingLoop.
func (n *Node) restorePending() {
	p := n.pending.Load()
	if p == nil || !n.restoring.CompareAndSwap(false, true) {
		return
	}
	defer n.restoring.Store(false)
	if !n.stateEmpty() {
		n.retirePendingLocked(p)
		return
	}
	f, err := os.Open(p.path)
	if err != nil {
		n.log.Error("opening the pending restore failed", "file", p.path, "error", err)
		return
	}
	defer f.Close()
	n.log.Info("restoring the pending backup", "file", p.path, "index", p.meta.Index, "digest", p.meta.Digest.String())
	m, err := n.restoreLocked(f, false)
	if err != nil {
		n.log.Error("restoring the pending backup failed; the file stays for the next attempt", "error", err)
		if errors.Is(err, backup.ErrCorrupt) || errors.Is(err, backup.ErrVersion) || errors.Is(err, backup.ErrNotBackup) {
			n.setAside(p.path)
			n.pending.Store(nil)
		}
		return
	}
	os.Remove(p.path)
	n.pending.Store(nil)
	n.log.Info("backup restored; the pending file is removed", "digest", m.Digest.String(), "index", n.fsm.Applied())
}

// retirePending retires the pending backup of a node whose state already
// holds keys.
func (n *Node) retirePending() {
	p := n.pending.Load()
	if p == nil || !n.restoring.CompareAndSwap(false, true) {
		return
	}
	defer n.restoring.Store(false)
	n.retirePendingLocked(p)
}

func (n *Node) retirePendingLocked(p *pendingRestore) {
	sum, _ := backup.Digest(n.fsm.Capture())
	n.pending.Store(nil)
	if sum == p.meta.Digest {
		os.Remove(p.path)
		n.log.Info("the cluster holds the pending backup's state already (restored by its leader): the pending file is removed", "digest", sum.String())
		return
	}
	n.setAside(p.path)
	n.log.Error("a backup was pending, but the cluster holds other data: it was not restored (GOBLIN RESTORE ... FORCE replaces a cluster's data)",
		"kept", filepath.Join(n.cfg.DataDir, refusedFile), "state digest", sum.String(), "backup digest", p.meta.Digest.String())
}

// setAside renames a pending file to restore.refused.
func (n *Node) setAside(path string) {
	if err := os.Rename(path, filepath.Join(n.cfg.DataDir, refusedFile)); err != nil {
		n.log.Error("setting the pending restore aside failed", "error", err)
	}
}

// stateEmpty reports whether the state holds no key.
func (n *Node) stateEmpty() bool {
	ks := n.fsm.KS()
	ks.RLock()
	defer ks.RUnlock()
	return ks.TotalKeys() == 0
}

// RestoreRunning reports whether this node is restoring a backup (a
// leadership transfer then waits: it would cut the restore short).
func (n *Node) RestoreRunning() bool { return n.restoring.Load() }

// restoreIndexRoom is how many indexes a restored state skips past the
// log's last: far more entries than Raft can append between that read
// and its taking the restore.
const restoreIndexRoom = 1 << 16

// restoreWait bounds how long an online restore on a follower waits to
// become leader.
const restoreWait = 30 * time.Second

// Restore replaces the cluster's state with the backup r (GOBLIN
// RESTORE), refusing a cluster whose state holds keys unless force is
// set. It runs on the leader; on a follower it first takes leadership.
// The backup is read and verified whole before anything changes.
func (n *Node) Restore(ctx context.Context, r io.Reader, force bool) (*backup.Meta, error) {
	if n.closed.Load() {
		return nil, ErrClosed
	}
	if !n.restoring.CompareAndSwap(false, true) {
		return nil, ErrRestoring
	}
	defer n.restoring.Store(false)
	if !n.Ready() {
		if err := n.takeLeadership(ctx); err != nil {
			return nil, err
		}
	}
	return n.restoreLocked(r, force)
}

// takeLeadership asks the leader to hand leadership to this node and
// waits until it leads and is ready, asking again while another node
// leads.
func (n *Node) takeLeadership(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, restoreWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var asked time.Time
	for !n.Ready() {
		if leader := n.LeaderID(); leader != "" && leader != n.cfg.ID && time.Since(asked) >= restoreRetry {
			asked = time.Now()
			if err := n.TransferLeadership(n.cfg.ID); err != nil && !n.IsLeader() {
				return err
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ErrTimeout
		case <-n.stop:
			return ErrClosed
		}
	}
	return nil
}

// restoreLocked reads and verifies the backup r, then installs it
// through Raft.Restore; the caller holds n.restoring.
func (n *Node) restoreLocked(r io.Reader, force bool) (*backup.Meta, error) {
	m, st, err := backup.Read(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return nil, err
	}
	if !n.IsLeader() {
		return nil, n.notLeaderErr()
	}
	if !force {
		ks := n.fsm.KS()
		ks.RLock()
		keys := ks.TotalKeys()
		ks.RUnlock()
		if keys > 0 {
			return nil, fmt.Errorf("%w: %d keys", ErrNotEmpty, keys)
		}
	}
	// Raft installs the snapshot past its last index: the state gets
	// that index, and every key counts as modified there. The index
	// leaves room for entries Raft appends before it takes the restore,
	// so that Raft's index for the snapshot is the one its state records
	// (the snapshot store refuses a snapshot whose two differ).
	at := max(st.Index, n.raft.LastIndex()+restoreIndexRoom) + 1
	st.Index = at
	st.KS.PruneTombstones(at)
	f, err := os.CreateTemp(n.cfg.DataDir, "restore-*.tmp")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := raftfsm.WriteSnapshot(bw, st); err != nil {
		return nil, err
	}
	st = nil // the state machine decodes its own copy
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	start := time.Now()
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: at - 1, Size: size}
	if err := n.raft.Restore(meta, bufio.NewReaderSize(f, 1<<20), enqueueTimeout); err != nil {
		return nil, fmt.Errorf("restore: %w", translateRaftErr(err))
	}
	// Raft's own no-op after the restore does not reach the state
	// machine; this entry makes every node's applied index pass the
	// restore's, so reads waiting for it go on.
	if err := n.raft.Apply((&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil), enqueueTimeout).Error(); err != nil {
		return nil, fmt.Errorf("restore: %w", translateRaftErr(err))
	}
	n.log.Info("backup restored", "backup index", m.Index, "index", at, "digest", m.Digest.String(),
		"from", m.Node, "keys", m.Counts.Keys, "members", m.Counts.Members, "took", time.Since(start).Round(time.Millisecond))
	return m, nil
}
