package node

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// Fsync is the durability mode of the Raft log, like Redis's appendfsync.
type Fsync uint8

const (
	// FsyncAlways fsyncs the log on every commit batch before the batch is
	// acknowledged: an acknowledged write survives power loss.
	FsyncAlways Fsync = iota
	// FsyncEverysec writes the log without fsync and fsyncs it once a
	// second: an acknowledged write survives a process crash (the data is
	// in the kernel), but power loss can lose about the last second.
	FsyncEverysec
)

func (f Fsync) String() string {
	if f == FsyncEverysec {
		return "everysec"
	}
	return "always"
}

// ParseFsync parses "always" or "everysec".
func ParseFsync(s string) (Fsync, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverysec, nil
	}
	return 0, fmt.Errorf("invalid fsync mode %q (want always or everysec)", s)
}

// stores is the seam where the log store is chosen: raft-boltdb/v2 for
// both the log and the stable store (term and vote, always fsynced: losing
// a vote could elect two leaders in one term).
type stores struct {
	log    *raftboltdb.BoltStore
	stable *raftboltdb.BoltStore
	stop   chan struct{}
	wg     sync.WaitGroup
}

func openStores(dir string, mode Fsync) (*stores, error) {
	log, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft-log.db"), NoSync: mode == FsyncEverysec})
	if err != nil {
		return nil, fmt.Errorf("open raft log: %w", err)
	}
	stable, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft-stable.db")})
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("open raft stable store: %w", err)
	}
	s := &stores{log: log, stable: stable, stop: make(chan struct{})}
	if mode == FsyncEverysec {
		s.wg.Add(1)
		go s.syncEverySecond()
	}
	return s, nil
}

func (s *stores) syncEverySecond() {
	defer s.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.log.Sync()
		}
	}
}

func (s *stores) logStore() raft.LogStore       { return s.log }
func (s *stores) stableStore() raft.StableStore { return s.stable }

// close syncs and closes both stores.
func (s *stores) close() error {
	close(s.stop)
	s.wg.Wait()
	err1 := s.log.Sync()
	err2 := s.log.Close()
	err3 := s.stable.Close()
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return err
		}
	}
	return nil
}
