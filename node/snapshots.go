package node

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/raftfsm"
)

// snapshotRetain is how many snapshots the store keeps.
const snapshotRetain = 2

// snapshotStore is raft's file snapshot store with what recovery needs:
//
//   - List hides an older snapshot once the log no longer holds the
//     entries after it. Raft restores the newest snapshot that opens and
//     decodes, and then applies the log from the entry after it; from a
//     snapshot whose entries are gone that would panic ("log not found")
//     at every start. Hidden, it is never tried: if nothing newer
//     restores, the node stops with an error that says what to do.
//   - The log keeps every entry after the older of the two retained
//     snapshots (logGuard.DeleteRange asks keepAfter; with one snapshot,
//     the whole log), so on a node that took its own snapshots a corrupt
//     newest snapshot always has a fallback: the older one, or the log
//     from its start. This costs disk: the log spans about two snapshot
//     intervals instead of TrailingLogs entries.
//   - Snapshots newer than the one raft restored failed to open or
//     decode; they are moved out of the store (to snapshots/corrupt/)
//     after the restore, so they are neither sent to followers nor kept
//     instead of good ones.
//   - Snapshots whose meta.json raft cannot read, which raft skips, are
//     moved aside the same way before raft starts, once the log is known
//     to hold what they hold; if it does not, the node refuses to start
//     (snapshots_meta.go).
//   - A snapshot that fails to be written (a full disk) is recorded for
//     INFO, its partial directory removed; raft keeps the whole log and
//     tries again at its next snapshot check.
type snapshotStore struct {
	*raft.FileSnapshotStore
	dir     string // the store's directory of snapshots
	corrupt string // where corrupt snapshots are moved
	log     raft.LogStore
	logger  hclog.Logger

	mu        sync.Mutex
	openErrs  map[string]error // snapshot ID → why it did not open
	lastErr   error            // the last snapshot write's error, nil if it succeeded
	lastErrAt time.Time
	lastOK    time.Time
	// setAsideAtOpen names the snapshots with an unreadable meta.json
	// moved aside before raft started, and why.
	setAsideAtOpen []string
	// written, when set, is told how long each snapshot written took to
	// write and its size in bytes.
	written func(d time.Duration, size int64)
}

func newSnapshotStore(dataDir string, log raft.LogStore, logger hclog.Logger) (*snapshotStore, error) {
	base := filepath.Join(dataDir, "snapshots")
	fs, err := raft.NewFileSnapshotStoreWithLogger(base, snapshotRetain, logger)
	if err != nil {
		return nil, err
	}
	s := &snapshotStore{
		FileSnapshotStore: fs, dir: filepath.Join(base, "snapshots"), corrupt: filepath.Join(base, "corrupt"),
		log: log, logger: logger, openErrs: map[string]error{},
	}
	// Partial snapshots of a write that failed or crashed.
	if ents, err := os.ReadDir(s.dir); err == nil {
		for _, e := range ents {
			if e.IsDir() && strings.HasSuffix(e.Name(), ".tmp") {
				os.RemoveAll(filepath.Join(s.dir, e.Name()))
			}
		}
	}
	return s, nil
}

// List returns the retained snapshots, newest first, without the older
// ones whose following entries the log no longer holds.
func (s *snapshotStore) List() ([]*raft.SnapshotMeta, error) {
	all, err := s.FileSnapshotStore.List()
	if err != nil || len(all) < 2 {
		return all, err
	}
	out := all[:1]
	for _, m := range all[1:] {
		if s.logFollows(m.Index, all[0].Index) {
			out = append(out, m)
		}
	}
	return out, nil
}

// logFollows reports whether the log holds the entries after index, up to
// upto at least (the newest snapshot's index: a state short of it would
// lose writes).
func (s *snapshotStore) logFollows(index, upto uint64) bool {
	first, err1 := s.log.FirstIndex()
	last, err2 := s.log.LastIndex()
	return err1 == nil && err2 == nil && last >= upto && first <= index+1
}

// keepAfter returns the index after which the log must keep every entry:
// the older retained snapshot's (0, everything, with fewer than two).
func (s *snapshotStore) keepAfter() uint64 {
	all, err := s.FileSnapshotStore.List()
	if err != nil || len(all) < 2 {
		return 0
	}
	return all[len(all)-1].Index
}

// Open opens a snapshot, remembering why one did not. A snapshot whose
// metadata gives another index than its state records is refused:
// meta.json has no checksum, and restored under a wrong index the state
// would skip or apply a second time the entries between the two.
func (s *snapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	m, rc, err := s.FileSnapshotStore.Open(id)
	if err == nil {
		br := bufio.NewReaderSize(rc, 1<<16)
		index, ok, perr := raftfsm.PeekIndex(br)
		switch {
		case perr != nil:
			err = fmt.Errorf("snapshot %s: %w", id, perr)
		case ok && index != m.Index:
			err = fmt.Errorf("snapshot %s: its meta.json gives index %d but its state was taken at index %d: the metadata is damaged", id, m.Index, index)
		}
		if err != nil {
			rc.Close()
			m, rc = nil, nil
		} else {
			rc = bufferedSnapshot{br, rc}
		}
	}
	if err != nil {
		s.mu.Lock()
		s.openErrs[id] = err
		s.mu.Unlock()
	}
	return m, rc, err
}

// bufferedSnapshot reads an opened snapshot through the buffer its
// header was checked with.
type bufferedSnapshot struct {
	*bufio.Reader
	io.Closer
}

// Create starts a snapshot; its failures are recorded.
func (s *snapshotStore) Create(version raft.SnapshotVersion, index, term uint64, conf raft.Configuration, confIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, conf, confIndex, trans)
	if err != nil {
		s.failed(err)
		// Create leaves its directory behind when writing the metadata
		// fails.
		prefix := fmt.Sprintf("%d-%d-", term, index)
		if ents, rerr := os.ReadDir(s.dir); rerr == nil {
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".tmp") {
					os.RemoveAll(filepath.Join(s.dir, e.Name()))
				}
			}
		}
		return nil, err
	}
	return &trackedSink{SnapshotSink: sink, s: s, start: time.Now()}, nil
}

func (s *snapshotStore) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr == nil {
		s.lastErrAt = time.Now()
	}
	s.lastErr = err
	s.logger.Error("writing a snapshot failed; the log is kept whole and the snapshot is tried again later", "error", err)
}

func (s *snapshotStore) succeeded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr != nil {
		s.logger.Info("a snapshot was written again", "after", time.Since(s.lastErrAt).Round(time.Millisecond))
	}
	s.lastErr, s.lastErrAt, s.lastOK = nil, time.Time{}, time.Now()
}

// status returns when a snapshot was last written, since when writing
// them fails, and the last snapshot write's error (nil: it succeeded).
func (s *snapshotStore) status() (lastOK, failingSince time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastOK, s.lastErrAt, s.lastErr
}

// trackedSink records how a snapshot write ends.
type trackedSink struct {
	raft.SnapshotSink
	s     *snapshotStore
	bad   bool
	start time.Time
	size  int64
}

func (t *trackedSink) Write(p []byte) (int, error) {
	n, err := t.SnapshotSink.Write(p)
	t.size += int64(n)
	if err != nil && !t.bad {
		t.bad = true
		t.s.failed(err)
	}
	return n, err
}

func (t *trackedSink) Close() error {
	err := t.SnapshotSink.Close()
	switch {
	case err != nil && !t.bad:
		t.s.failed(err)
	case err == nil:
		t.s.succeeded()
		if t.s.written != nil {
			t.s.written(time.Since(t.start), t.size)
		}
	}
	if err != nil {
		t.removePartial()
	}
	return err
}

// Cancel abandons the snapshot. raft's sink keeps its directory when
// flushing fails (a full disk): it is removed here.
func (t *trackedSink) Cancel() error {
	err := t.SnapshotSink.Cancel()
	t.removePartial()
	return err
}

func (t *trackedSink) removePartial() {
	os.RemoveAll(filepath.Join(t.s.dir, t.ID()+".tmp"))
}

// checkLog fails when the log lacks entries right after the newest
// snapshot (or, without one, from the first index): raft would restore
// the snapshot and then panic applying the missing entries. Called before
// raft starts; the snapshots raft cannot list are judged first
// (setAsideUnreadable).
func (s *snapshotStore) checkLog() error {
	all, err := s.FileSnapshotStore.List()
	if err != nil {
		return err
	}
	if err := s.setAsideUnreadable(all); err != nil {
		return err
	}
	first, err := s.log.FirstIndex()
	if err != nil {
		return err
	}
	if first == 0 {
		return nil // an empty log: the snapshot is the whole state
	}
	var after uint64 // the state needs entries after this index
	if len(all) > 0 {
		after = all[0].Index
	}
	if first > after+1 {
		return fmt.Errorf("node: the Raft log starts at index %d, but the newest snapshot (%s) ends at index %d: entries %d to %d are missing. %s",
			first, snapshotLabel(all), after, after+1, first-1, s.startOver())
	}
	return nil
}

func snapshotLabel(all []*raft.SnapshotMeta) string {
	if len(all) == 0 {
		return "none"
	}
	return all[0].ID
}

// afterRestore moves aside the snapshots newer than the one raft
// restored: they failed to open or decode.
func (s *snapshotStore) afterRestore(restoredIndex, restoredTerm uint64) {
	all, err := s.FileSnapshotStore.List()
	if err != nil {
		return
	}
	for _, m := range all {
		if m.Term < restoredTerm || (m.Term == restoredTerm && m.Index <= restoredIndex) {
			break
		}
		s.mu.Lock()
		why := s.openErrs[m.ID]
		s.mu.Unlock()
		reason := "it did not decode (see the log above)"
		if why != nil {
			reason = why.Error()
		}
		s.setAside(m.ID, reason, "a snapshot is corrupt: started from an older state and the log after it; the corrupt snapshot was moved aside",
			"restored-index", restoredIndex)
	}
}

// setAside moves the corrupt snapshot id aside and logs msg, with why
// (reason) and where it went, or logs that it could not be moved and
// returns why. A snapshot left in place is harmless: raft fails on it
// again, or skips it.
func (s *snapshotStore) setAside(id, reason, msg string, args ...any) error {
	if err := s.moveAside(id); err != nil {
		s.logger.Error("a corrupt snapshot could not be moved aside", "id", id, "reason", reason, "error", err)
		return err
	}
	s.logger.Error(msg, append([]any{"id", id, "reason", reason, "moved-to", filepath.Join(s.corrupt, id)}, args...)...)
	return nil
}

// isRestoreFailure tells raft's error when no snapshot restored.
func isRestoreFailure(err error) bool {
	return strings.Contains(err.Error(), "failed to load any existing snapshots")
}

// fromLogStart handles raft's failure to restore any snapshot when the
// log still holds every entry from the first: the snapshots are moved
// aside, and it reports true, so raft starts again and replays the log.
func (s *snapshotStore) fromLogStart(err error) bool {
	first, ferr := s.log.FirstIndex()
	if !isRestoreFailure(err) || ferr != nil || first != 1 {
		return false
	}
	all, lerr := s.FileSnapshotStore.List()
	if lerr != nil {
		return false
	}
	for _, m := range all {
		if err := s.moveAside(m.ID); err != nil {
			s.logger.Error("a corrupt snapshot could not be moved aside", "id", m.ID, "error", err)
			return false
		}
	}
	s.logger.Error("no snapshot could be restored: starting from the log, which holds every entry; the snapshots were moved aside",
		"snapshots", len(all), "moved-to", s.corrupt)
	return true
}

func (s *snapshotStore) moveAside(id string) error {
	if err := os.MkdirAll(s.corrupt, 0o755); err != nil {
		return err
	}
	return os.Rename(filepath.Join(s.dir, id), filepath.Join(s.corrupt, id))
}

// restoreFailed explains raft's failure to restore any snapshot.
func (s *snapshotStore) restoreFailed(err error) error {
	if !isRestoreFailure(err) {
		return err
	}
	all, _ := s.FileSnapshotStore.List()
	tried, _ := s.List()
	var ids []string
	s.mu.Lock()
	for _, m := range all {
		why := "did not decode (see the log above)"
		if e := s.openErrs[m.ID]; e != nil {
			why = e.Error()
		} else if !slices.ContainsFunc(tried, func(x *raft.SnapshotMeta) bool { return x.ID == m.ID }) {
			why = "the log after it is gone"
		}
		ids = append(ids, fmt.Sprintf("%s: %s", m.ID, why))
	}
	ids = append(ids, s.setAsideAtOpen...)
	s.mu.Unlock()
	return errors.New("node: no snapshot could be restored (" + strings.Join(ids, "; ") + "), and the log no longer holds the entries an older state would need. " +
		s.startOver())
}

// startOver says what to do about a data directory the node cannot
// start from.
func (s *snapshotStore) startOver() string {
	return "In a cluster, move the data directory " + filepath.Dir(filepath.Dir(s.dir)) + " aside and start the node again with the same flags: " +
		"it catches up from the leader. A single node cannot be repaired: restore its data directory from a backup"
}
