package node

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
//   - A snapshot can be installed past the log's end: a backup restored
//     (GOBLIN RESTORE, restore.go, restoreIndexRoom past the log), a
//     follower's state sent by the leader. raft stores no entry at its
//     index, and empties the wal (a monotonic store) first, but bolt
//     keeps the entries before it: its log then lacks the indexes in
//     between, and no state from before the snapshot can be rebuilt
//     across that gap. So an older snapshot is listed only if the log
//     holds the newest one's own entry, of its term, which an installed
//     snapshot lacks (noFallback), and the log is replayed from its
//     start (fromLogStart) only if it holds every entry from the first
//     to the last and each snapshot's own (logReplays); otherwise the
//     node refuses to start, moving nothing, rather than panic across
//     the gap or start from the state before the restore.
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
	// noReplay is why fromLogStart did not replay the log from its start
	// (nil: it did, or was not asked to).
	noReplay error
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
	if err := checkSnapshotFiles(s.dir); err != nil {
		return nil, err
	}
	return s, nil
}

// checkSnapshotFiles refuses a snapshot file that is not a regular file
// (a named pipe, a device): opening it to read would wait forever, and
// raft reads every snapshot's meta.json as it starts. Raft writes only
// regular files, so none is there by accident.
func checkSnapshotFiles(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // raft reports what it cannot read
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		for _, name := range []string{metaFileName, "state.bin", metaSumName} {
			p := filepath.Join(dir, e.Name(), name)
			if st, err := os.Lstat(p); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
				return fmt.Errorf("node: %s is not a regular file (%s): goblind never writes one; move it out of the data directory and start again", p, st.Mode().Type())
			}
		}
	}
	return nil
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
		if s.noFallback(m, all[0]) == "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// noFallback returns why the older snapshot m cannot stand in for the
// newest one, newest, "" if it can: the log must hold the entries after
// m up to newest's index at least (a state short of it would lose
// writes), newest's own entry among them, of its term. A newest snapshot
// installed past the log has none there (raft stores no entry at its
// index) or, on a follower that held other entries, one of another term:
// the log does not lead from m to it. Reading that one entry is enough:
// a gap in the log comes only from a snapshot installed past it, and one
// installed after m is newest (two are kept). A newest snapshot this node
// took has its entry, and the log keeps every entry after m.
func (s *snapshotStore) noFallback(m, newest *raft.SnapshotMeta) string {
	first, err1 := s.log.FirstIndex()
	last, err2 := s.log.LastIndex()
	if err1 != nil || err2 != nil || last < newest.Index || first > m.Index+1 {
		return "the log after it is gone"
	}
	var e raft.Log
	if err := s.log.GetLog(newest.Index, &e); err != nil || e.Term != newest.Term {
		return "the log does not lead from it to " + newest.ID + ", which was installed past the log's end"
	}
	return ""
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
// metadata gives another index than its state records is refused: one
// without meta.sum (an earlier build's) has nothing else to catch it,
// and restored under a wrong index the state would skip or apply a
// second time the entries between the two.
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
		if serr := writeMetaSum(filepath.Join(t.s.dir, t.ID())); serr != nil {
			t.s.logger.Warn("writing a snapshot's checksum failed: the snapshot is kept without one", "id", t.ID(), "error", serr)
		}
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
	if all, err = s.setAsideUnreadable(all); err != nil {
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
	if m, ok := s.log.(raft.MonotonicLogStore); ok && m.IsMonotonic() && len(all) > 0 {
		// Raft empties a monotonic log before it installs a snapshot, so
		// such a log ends before its newest snapshot only when its end
		// was lost: raft would start, and then refuse every append.
		last, err := s.log.LastIndex()
		if err != nil {
			return err
		}
		if last < after {
			return fmt.Errorf("node: the Raft log ends at index %d, before the newest snapshot (%s) at index %d: the end of the log is missing. %s",
				last, snapshotLabel(all), after, s.startOver())
		}
	}
	if len(all) == 0 {
		// Without a snapshot raft reads the whole log at start (for its
		// configuration) and panics at a missing entry: a log that lacks
		// the entries a snapshot installed past it replaced (bolt's,
		// after a restore), whose snapshot is gone (moved out of the
		// store). The same read, done first, refuses instead.
		last, err := s.log.LastIndex()
		if err != nil {
			return err
		}
		lo, hi, err := s.missing(first, last)
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		if lo != 0 {
			return fmt.Errorf("node: there is no snapshot, and the Raft log (indexes %d to %d) lacks entries %d to %d: the state they led to was in a snapshot installed past the log's end (a backup restored with GOBLIN RESTORE, or a state sent by the leader), which is gone. %s",
				first, last, lo, hi, s.startOver())
		}
	}
	return nil
}

// logRange returns the log's first and last indexes.
func (s *snapshotStore) logRange() (first, last uint64, err error) {
	if first, err = s.log.FirstIndex(); err != nil {
		return 0, 0, err
	}
	last, err = s.log.LastIndex()
	return first, last, err
}

// missing returns the first run of entries, lo to hi, that the log lacks
// between the indexes from and to (lo 0: it holds them all). It reads
// every entry: it runs only where raft itself would read them all.
func (s *snapshotStore) missing(from, to uint64) (lo, hi uint64, err error) {
	var e raft.Log
	for i := from; i <= to; i++ {
		switch err := s.log.GetLog(i, &e); {
		case err == nil:
			if lo != 0 {
				return lo, i - 1, nil
			}
		case errors.Is(err, raft.ErrLogNotFound):
			if lo == 0 {
				lo = i
			}
		default:
			return 0, 0, fmt.Errorf("reading the Raft log's entry %d: %w", i, err)
		}
	}
	if lo != 0 {
		return lo, to, nil
	}
	return 0, 0, nil
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
// A log that starts at its first entry may still not rebuild the
// snapshots' state (logReplays): then nothing is moved, the reason is
// kept for restoreFailed, and it reports false.
func (s *snapshotStore) fromLogStart(err error) bool {
	first, ferr := s.log.FirstIndex()
	if !isRestoreFailure(err) || ferr != nil || first != 1 {
		return false
	}
	all, lerr := s.FileSnapshotStore.List()
	if lerr != nil {
		return false
	}
	if why := s.logReplays(all); why != nil {
		s.mu.Lock()
		s.noReplay = why
		s.mu.Unlock()
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

// logReplays returns why replaying the log from its first entry would
// not rebuild the state of the snapshots all, nil if it would: the log
// must hold every entry from the first to the last, so that raft reads
// them all (it panics at a missing one), and each snapshot's own entry,
// of its term, so that it holds the history the snapshots were taken
// from. A snapshot installed past the log breaks one or the other: bolt
// keeps the entries before it and lacks those it replaced; a follower's
// log may hold entries of another history at its index. Reading every
// entry costs what raft's own reading of them at start does, and runs
// only when no snapshot restored.
func (s *snapshotStore) logReplays(all []*raft.SnapshotMeta) error {
	first, last, err := s.logRange()
	if err != nil {
		return err
	}
	const installed = "(a backup restored with GOBLIN RESTORE, or a state sent by the leader)"
	lo, hi, err := s.missing(first, last)
	if err != nil {
		return err
	}
	if lo != 0 {
		in := "a snapshot installed past the log's end " + installed + " replaced them, and is no longer kept"
		for _, m := range all {
			if m.Index >= lo && m.Index <= hi {
				in = "snapshot " + m.ID + " was installed in their place, past the log's end " + installed
			}
		}
		return fmt.Errorf("entries %d to %d are missing: %s", lo, hi, in)
	}
	for _, m := range all {
		if m.Index > last {
			return fmt.Errorf("it ends at index %d, before snapshot %s (index %d), which was installed past its end %s", last, m.ID, m.Index, installed)
		}
		var e raft.Log
		if err := s.log.GetLog(m.Index, &e); err != nil {
			return fmt.Errorf("reading the Raft log's entry %d: %w", m.Index, err)
		}
		if e.Term != m.Term {
			return fmt.Errorf("its entry %d is of term %d, snapshot %s's of term %d: it does not hold the history the snapshot was taken from", m.Index, e.Term, m.ID, m.Term)
		}
	}
	return nil
}

// moveAside moves the snapshot id to the corrupt directory. Raft lists
// a snapshot by the ID its meta.json gives and opens the directory of
// that name; a directory renamed, or a meta.json whose ID was damaged,
// breaks the link, and the snapshot is then found by its meta.json.
func (s *snapshotStore) moveAside(id string) error {
	if err := os.MkdirAll(s.corrupt, 0o755); err != nil {
		return err
	}
	name := id
	if _, err := os.Stat(filepath.Join(s.dir, id)); errors.Is(err, fs.ErrNotExist) {
		if found := s.dirOf(id); found != "" {
			name = found
		}
	}
	return os.Rename(filepath.Join(s.dir, name), filepath.Join(s.corrupt, name))
}

// dirOf returns the name of the snapshot directory whose meta.json
// gives the ID id, "" if none does.
func (s *snapshotStore) dirOf(id string) string {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if m, err := readSnapshotMeta(filepath.Join(s.dir, e.Name(), metaFileName)); err == nil && m.ID == id {
			return e.Name()
		}
	}
	return ""
}

// restoreFailed explains raft's failure to restore any snapshot.
func (s *snapshotStore) restoreFailed(err error) error {
	if !isRestoreFailure(err) {
		return err
	}
	all, _ := s.FileSnapshotStore.List()
	hidden := map[string]string{} // why List hid a snapshot
	for _, m := range all[min(1, len(all)):] {
		if why := s.noFallback(m, all[0]); why != "" {
			hidden[m.ID] = why
		}
	}
	var ids []string
	s.mu.Lock()
	for _, m := range all {
		why := "did not decode (see the log above)"
		if e := s.openErrs[m.ID]; e != nil {
			why = e.Error()
		} else if h, ok := hidden[m.ID]; ok {
			why = h
		}
		ids = append(ids, fmt.Sprintf("%s: %s", m.ID, why))
	}
	ids = append(ids, s.setAsideAtOpen...)
	noReplay := s.noReplay
	s.mu.Unlock()
	log := "the log no longer holds the entries an older state would need"
	if noReplay != nil {
		log = "the log cannot rebuild the state from its first entry: " + noReplay.Error()
	}
	return errors.New("node: no snapshot could be restored (" + strings.Join(ids, "; ") + "), and " + log + ". " +
		s.startOver())
}

// startOver says what to do about a data directory the node cannot
// start from.
func (s *snapshotStore) startOver() string {
	return "In a cluster, move the data directory " + filepath.Dir(filepath.Dir(s.dir)) + " aside and start the node again with the same flags: " +
		"it catches up from the leader. A single node cannot be repaired: restore its data directory from a backup"
}
