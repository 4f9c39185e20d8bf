package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/goblindb/goblin/node/wal"
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

// LogStore names the Raft log store.
type LogStore string

const (
	// LogStoreAuto keeps whatever log a data directory already holds and
	// uses LogStoreWAL for a new one.
	LogStoreAuto LogStore = ""
	// LogStoreWAL is node/wal: segment files, one write per batch. The
	// default, chosen by measurement (docs/benchmarks.md).
	LogStoreWAL LogStore = "wal"
	// LogStoreBolt is raft-boltdb/v2 (raft-log.db).
	LogStoreBolt LogStore = "bolt"
)

// ParseLogStore parses "wal", "bolt" or "auto".
func ParseLogStore(s string) (LogStore, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return LogStoreAuto, nil
	case "wal":
		return LogStoreWAL, nil
	case "bolt":
		return LogStoreBolt, nil
	}
	return "", fmt.Errorf("invalid log store %q (want wal, bolt or auto)", s)
}

const (
	boltLogFile = "raft-log.db"
	walDir      = "raft-wal"
)

// stores is the seam where the log store is chosen. The stable store
// (term and vote) is always raft-boltdb/v2, fsynced on every change:
// losing a vote could elect two leaders in one term. The log is
// raft-boltdb/v2 (NoSync for everysec) or node/wal; under everysec a
// goroutine syncs it once a second. Either way a batch is in the kernel
// before raft counts it stored, so kill -9 loses nothing acknowledged.
type stores struct {
	kind   LogStore
	log    raft.LogStore // what raft uses: a LogCache over the store
	sync   func() error
	close_ func() error
	stable *raftboltdb.BoltStore
	stop   chan struct{}
	wg     sync.WaitGroup
}

// logCacheSize is how many recent entries stay in memory in front of the
// store (followers apply and the leader replicates from it).
const logCacheSize = 512

// chooseLogStore resolves LogStoreAuto and refuses a choice that would
// ignore a log the directory already holds.
func chooseLogStore(dir string, want LogStore) (LogStore, error) {
	_, errBolt := os.Stat(filepath.Join(dir, boltLogFile))
	_, errWAL := os.Stat(filepath.Join(dir, walDir))
	hasBolt, hasWAL := errBolt == nil, errWAL == nil
	switch {
	case want == LogStoreAuto && hasBolt && !hasWAL:
		return LogStoreBolt, nil
	case want == LogStoreAuto:
		return LogStoreWAL, nil
	case want == LogStoreWAL && hasBolt:
		return "", fmt.Errorf("node: %s holds a raft-boltdb log (%s); start with --log-store bolt, or on a new data directory", dir, boltLogFile)
	case want == LogStoreBolt && hasWAL:
		return "", fmt.Errorf("node: %s holds a wal log (%s/); start with --log-store wal, or on a new data directory", dir, walDir)
	}
	return want, nil
}

func openStores(dir string, mode Fsync, want LogStore, logf func(string, ...any)) (*stores, error) {
	kind, err := chooseLogStore(dir, want)
	if err != nil {
		return nil, err
	}
	s := &stores{kind: kind, stop: make(chan struct{})}
	var base raft.LogStore
	switch kind {
	case LogStoreBolt:
		b, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, boltLogFile), NoSync: mode == FsyncEverysec})
		if err != nil {
			return nil, fmt.Errorf("open raft log: %w", err)
		}
		base, s.sync, s.close_ = b, b.Sync, b.Close
	default:
		w, err := wal.Open(filepath.Join(dir, walDir), wal.Options{SyncEveryBatch: mode == FsyncAlways, Logf: logf})
		if err != nil {
			return nil, fmt.Errorf("open raft log: %w", err)
		}
		base, s.sync, s.close_ = w, w.Sync, w.Close
	}
	s.stable, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft-stable.db")})
	if err != nil {
		s.close_()
		return nil, fmt.Errorf("open raft stable store: %w", err)
	}
	s.log, err = raft.NewLogCache(logCacheSize, base)
	if err != nil {
		s.close_()
		s.stable.Close()
		return nil, err
	}
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
			s.sync()
		}
	}
}

func (s *stores) logStore() raft.LogStore       { return s.log }
func (s *stores) stableStore() raft.StableStore { return s.stable }

// close syncs and closes both stores.
func (s *stores) close() error {
	close(s.stop)
	s.wg.Wait()
	return errors.Join(s.sync(), s.close_(), s.stable.Close())
}
