package node

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// openBolt opens a raft-boltdb store and reads what a start reads first
// (the log's first and last entries, the stable store's term), turning
// the panics and memory faults bbolt meets in a damaged file (a truncated
// file read through its memory map, a freelist that names a page twice,
// a key whose length runs off its page) into an error that names the
// file: what to do about it is the caller's to say. First the links
// between the file's pages are checked (checkBoltPages): bbolt follows
// them blindly, and a loop among them never ends. Damage to what an
// entry holds is found when the entry is read.
func openBolt(opts raftboltdb.Options) (s *raftboltdb.BoltStore, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damaged(opts.Path, &err)
	if err := checkBoltPages(opts.Path); err != nil {
		return nil, err
	}
	if s, err = raftboltdb.New(opts); err != nil {
		return nil, err
	}
	s.GetUint64(keyCurrentTerm)
	first, err1 := s.FirstIndex()
	last, err2 := s.LastIndex()
	if err := errors.Join(err1, err2); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", opts.Path, err)
	}
	var e raft.Log
	for _, i := range []uint64{first, last} {
		if i > 0 {
			if err := s.GetLog(i, &e); err != nil {
				s.Close()
				return nil, fmt.Errorf("%s: entry %d: %w", opts.Path, i, err)
			}
		}
	}
	return s, nil
}

// boltLog is a raft-boltdb log whose reads turn the panics and memory
// faults bbolt meets in a damaged file into errors that name it, as
// openBolt does for the first reads: the log's whole length is read at a
// start without a snapshot (snapshots.go checks it before Raft does, which
// panics at any error), and any entry may be read later.
type boltLog struct {
	*raftboltdb.BoltStore
	path string
}

func (b *boltLog) GetLog(index uint64, l *raft.Log) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damaged(b.path, &err)
	return b.BoltStore.GetLog(index, l)
}

// damaged, deferred with panics on faults set, turns a panic or memory
// fault of bbolt reading the file at path into *err.
func damaged(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s is damaged: %v", path, r)
	}
}
