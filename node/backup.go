package node

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/backup"
)

// Digest returns the digest of this node's state (package backup) and
// the log index it is at. It is a read: it passes ReadBarrier first
// (local: a READONLY connection's check), so the state covers every
// write acknowledged before the call, and it runs on a Capture, a frozen
// view of the state: applies wait only while the view is taken.
func (n *Node) Digest(ctx context.Context, local bool) (uint64, backup.Sum, error) {
	if err := n.ReadBarrier(ctx, local); err != nil {
		return 0, backup.Sum{}, err
	}
	st := n.fsm.Capture()
	sum, _ := backup.Digest(st)
	return st.Index, sum, nil
}

// Backup writes a backup of this node's state, leader or follower, to a
// new file in the data directory and returns it open, positioned at its
// start, with its metadata. The file is already unlinked: it goes away
// when the caller closes it, or with the process. Like Digest it is a
// read (ReadBarrier, then a Capture), so the node serves on meanwhile;
// backups run one at a time, since each holds a copy of the state.
func (n *Node) Backup(ctx context.Context, local bool) (*os.File, *backup.Meta, error) {
	if err := n.ReadBarrier(ctx, local); err != nil {
		return nil, nil, err
	}
	n.backupMu.Lock()
	defer n.backupMu.Unlock()
	f, err := os.CreateTemp(n.cfg.DataDir, "backup-*.tmp")
	if err != nil {
		return nil, nil, fmt.Errorf("backup: %w", err)
	}
	os.Remove(f.Name())
	st := n.fsm.Capture()
	start := time.Now()
	bw := bufio.NewWriterSize(f, 1<<20)
	m, err := backup.Write(bw, st, backup.Meta{Created: time.Now(), Node: n.cfg.ID, Term: n.termOf(st.Index)})
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = f.Seek(0, 0)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("backup: %w", err)
	}
	n.log.Info("backup written", "index", m.Index, "term", m.Term, "digest", m.Digest.String(),
		"keys", m.Counts.Keys, "members", m.Counts.Members, "bytes", m.Size, "took", time.Since(start).Round(time.Millisecond))
	return f, m, nil
}

// termOf returns the term of the entry at index: from the log, or from
// the last snapshot when the log no longer holds it; 0 if neither does.
func (n *Node) termOf(index uint64) uint64 {
	var l raft.Log
	if err := n.stores.logStore().GetLog(index, &l); err == nil {
		return l.Term
	}
	stats := n.raft.Stats()
	if stats["last_snapshot_index"] == strconv.FormatUint(index, 10) {
		t, _ := strconv.ParseUint(stats["last_snapshot_term"], 10, 64)
		return t
	}
	return 0
}
