package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/raft"
)

// Snapshots whose meta.json raft cannot read.
//
// raft's file snapshot store knows a snapshot by its meta.json. A
// snapshot whose meta.json is missing, empty, cut short or not JSON, or
// gives a snapshot version this build does not read, is skipped with a
// warning ("failed to read metadata") at every listing: raft neither
// restores it nor, since it reaps only the snapshots it lists, ever
// removes it. Skipped, a newest snapshot would also hide what
// it holds: raft starts from an older state and the log after it,
// whether or not that log reaches the skipped snapshot's index.
//
// So before raft starts (checkLog), every such directory is judged by
// the index its name gives (raft names snapshots TERM-INDEX-MILLISECONDS)
// against the newest snapshot raft lists, the state raft starts from:
//
//   - At or below that snapshot's index, nothing needs it.
//   - Above it, the log must hold every entry from the one after the
//     state raft starts from (the first, without a snapshot) up to the
//     unreadable snapshot's index, the last of them with the snapshot's
//     term: by Raft's log matching, those are then the very entries the
//     snapshot was taken from, and applying them rebuilds it. On a node
//     that took its own snapshots the log always does (snapshotStore's
//     retention). It does not when the snapshot was installed past the
//     log: a follower's state sent by the leader, a backup restored with
//     GOBLIN RESTORE; the node then refuses to start, saying what to do,
//     rather than start without what the snapshot holds.
//   - A directory whose name gives no index cannot be judged: the node
//     refuses to start until it is moved out.
//
// Judged safe, each is moved aside to snapshots/corrupt/ as a snapshot
// that fails to restore is (setAside), and the node starts.

// unreadableSnapshot is a snapshot directory raft's store skips.
type unreadableSnapshot struct {
	id          string
	claims      string // the ID its meta.json gives, when it parses
	term, index uint64 // from its name; index 0 when the name gives none
	why         error  // why its meta.json is not read
}

// reason says what is wrong with the snapshot, as logged and reported.
func (u unreadableSnapshot) reason() string {
	return fmt.Sprintf("its meta.json cannot be read (%v)", u.why)
}

// unreadable lists the snapshot directories raft's store skips, newest
// first.
func (s *snapshotStore) unreadable() ([]unreadableSnapshot, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []unreadableSnapshot
	for _, e := range ents {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		claims, why := readSnapshotMeta(filepath.Join(s.dir, e.Name(), metaFileName))
		if why == nil {
			continue
		}
		u := unreadableSnapshot{id: e.Name(), claims: claims.ID, why: why}
		u.term, u.index = parseSnapshotID(e.Name())
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b unreadableSnapshot) int {
		if a.index != b.index {
			return -compareUint(a.index, b.index)
		}
		return -compareUint(a.term, b.term)
	})
	return out, nil
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readSnapshotMeta reads a meta.json as raft's store does, checked
// against its meta.sum (snapshots_sum.go), and returns it, or why raft
// would skip the snapshot or why it must not be used (with what it
// claims when only the checksum fails).
func readSnapshotMeta(path string) (raft.SnapshotMeta, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return raft.SnapshotMeta{}, errors.New("it is missing")
	}
	if err != nil {
		return raft.SnapshotMeta{}, err
	}
	var m struct { // raft's fileSnapshotMeta
		raft.SnapshotMeta
		CRC []byte
	}
	switch err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); {
	case errors.Is(err, io.EOF):
		return raft.SnapshotMeta{}, errors.New("it is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return raft.SnapshotMeta{}, errors.New("it is cut short")
	case err != nil:
		return raft.SnapshotMeta{}, fmt.Errorf("it is not valid JSON: %w", err)
	}
	if err := checkMetaSum(filepath.Dir(path), b); err != nil {
		return m.SnapshotMeta, err // what it claims, for the caller to ignore
	}
	if m.Version < raft.SnapshotVersionMin || m.Version > raft.SnapshotVersionMax {
		return raft.SnapshotMeta{}, fmt.Errorf("it gives snapshot version %d, which this build does not read", m.Version)
	}
	return m.SnapshotMeta, nil
}

// parseSnapshotID returns the term and index a snapshot's name gives
// (raft's TERM-INDEX-MILLISECONDS); index 0 if it gives none.
func parseSnapshotID(id string) (term, index uint64) {
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return 0, 0
	}
	var n [3]uint64
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return 0, 0
		}
		n[i] = v
	}
	return n[0], n[1]
}

// setAsideUnreadable judges the snapshots raft's store skips, and those
// whose meta.json does not match its checksum, against the newest of the
// others (all: raft's listing, newest first), moves them aside when the
// log makes up for them, and otherwise fails with what to do, moving
// nothing. It returns raft's listing without them: what raft lists once
// they are moved.
func (s *snapshotStore) setAsideUnreadable(all []*raft.SnapshotMeta) ([]*raft.SnapshotMeta, error) {
	bad, err := s.unreadable()
	if err != nil || len(bad) == 0 {
		return all, err
	}
	// raft lists a snapshot whose meta.json parses, damaged or not.
	var good []*raft.SnapshotMeta
	for _, m := range all {
		if !slices.ContainsFunc(bad, func(u unreadableSnapshot) bool { return u.id == m.ID || u.claims == m.ID }) {
			good = append(good, m)
		}
	}
	all = good
	var base *raft.SnapshotMeta // the state raft starts from; nil: the log's first entry
	var from uint64             // the state's index
	if len(all) > 0 {
		base, from = all[0], all[0].Index
	}
	for _, u := range bad {
		if u.index == 0 {
			return nil, fmt.Errorf("node: %s is in the snapshot directory %s but raft cannot read it: %s, and its name is not a snapshot's (TERM-INDEX-MILLISECONDS), so what state it holds cannot be told. "+
				"Move it out of %s and start the node again", u.id, s.dir, u.reason(), s.dir)
		}
	}
	// The newest is checked: a log that makes up for it makes up for
	// the older ones too.
	if newest := bad[0]; newest.index > from {
		if why := s.logRebuilds(from, newest); why != nil {
			startsFrom := "the log's start"
			if base != nil {
				startsFrom = "snapshot " + base.ID
			}
			return nil, fmt.Errorf("node: snapshot %s cannot be used: %s, and the log cannot rebuild it from %s (%v): starting without it would lose what it holds. %s",
				newest.id, newest.reason(), startsFrom, why, s.startOver())
		}
	}
	for _, u := range bad {
		var err error
		switch {
		case u.index <= from:
			err = s.setAside(u.id, u.reason(), "an older snapshot is corrupt: the newest snapshot is used; the corrupt snapshot was moved aside", "used", base.ID)
		case base != nil:
			err = s.setAside(u.id, u.reason(), "a snapshot is corrupt: starting from an older snapshot and the log after it, which holds every entry up to the corrupt one; the corrupt snapshot was moved aside",
				"from", base.ID, "from-index", from, "corrupt-index", u.index)
		default:
			err = s.setAside(u.id, u.reason(), "a snapshot is corrupt: starting from the log, which holds every entry up to it; the corrupt snapshot was moved aside",
				"corrupt-index", u.index)
		}
		where := "moved aside"
		if err != nil {
			where = "left in place: " + err.Error()
		}
		s.mu.Lock()
		s.setAsideAtOpen = append(s.setAsideAtOpen, u.id+": "+u.reason()+", "+where)
		s.mu.Unlock()
	}
	return all, nil
}

// logRebuilds returns why the log cannot rebuild snapshot u from the
// state at index from (0: none, the log from its first entry), nil if it
// can: it holds every entry from from+1 to u's index, the last of u's
// term. These are the entries raft applies after that state anyway.
func (s *snapshotStore) logRebuilds(from uint64, u unreadableSnapshot) error {
	first, last, err := s.logRange()
	if err != nil {
		return err
	}
	switch {
	case last == 0:
		return errors.New("the log is empty")
	case first > from+1:
		return fmt.Errorf("the log starts at index %d: entries %d to %d are gone", first, from+1, first-1)
	case last < u.index:
		return fmt.Errorf("the log ends at index %d: entries %d to %d are missing", last, last+1, u.index)
	}
	if lo, hi, err := s.missing(from+1, u.index); err != nil {
		return err
	} else if lo != 0 {
		return fmt.Errorf("the log lacks entries %d to %d", lo, hi)
	}
	var e raft.Log
	if err := s.log.GetLog(u.index, &e); err != nil {
		return fmt.Errorf("reading the Raft log's entry %d: %w", u.index, err)
	}
	if e.Term != u.term {
		return fmt.Errorf("the log's entry %d is of term %d, the snapshot's of term %d: the log does not hold the snapshot's history", u.index, e.Term, u.term)
	}
	return nil
}
