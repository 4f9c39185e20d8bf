package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
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
	// default: one command in flight ran 2.0x as fast as on raft-boltdb,
	// whose every batch rewrites B+tree pages and its meta page.
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
// Raft is given the log through a logGuard (logguard.go): recent entries
// cached, and a failing disk handled.
type stores struct {
	kind     LogStore
	guard    *logGuard
	sync     func() error
	closeLog func() error
	stable   *raftboltdb.BoltStore
	// raftStable is stable as raft is given it (stableclose.go).
	raftStable *closingStable
	stop       chan struct{}
	wg         sync.WaitGroup
	log        hclog.Logger
	// stats measure the log (metrics.go); ownFsync: the store times its
	// own fsyncs.
	stats    logStats
	ownFsync bool
	// leader defers the leader's own fdatasyncs (leadersync.go); nil
	// when every append is synced as it is made.
	leader *leaderSync
	// Under everysec, applied reads the state machine's applied index
	// (set once the node has one), and syncedApplied is the applied index
	// a sync is known to cover: every entry applied up to it is durable
	// in this node's log (durableindex.go).
	applied       atomic.Pointer[func() uint64]
	syncedApplied atomic.Uint64
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

// keyCurrentTerm is where raft keeps its term in the stable store.
var keyCurrentTerm = []byte("CurrentTerm")

// openStores opens the stores in dir. deferLeader: a cluster node's
// leader fdatasyncs its appends beside replication (leadersync.go), with
// node/wal under --fsync always.
func openStores(dir string, mode Fsync, want LogStore, deferLeader bool, inject func(wal.Op) error, logger hclog.Logger) (*stores, error) {
	kind, err := chooseLogStore(dir, want)
	if err != nil {
		return nil, err
	}
	s := &stores{kind: kind, stop: make(chan struct{}), log: logger}
	s.stable, err = openBolt(raftboltdb.Options{Path: filepath.Join(dir, "raft-stable.db")})
	if err != nil {
		return nil, fmt.Errorf("open raft stable store: %w. It holds only the term and vote: "+
			"on a single node, remove it and start again (the term is taken from the log); "+
			"in a cluster, move the data directory aside and start the node again: it catches up from the leader", err)
	}
	// A node with Raft state whose log is gone would start from its last
	// snapshot (or nothing) and lose what came after, silently.
	term, _ := s.stable.GetUint64(keyCurrentTerm)
	if term > 0 {
		_, errBolt := os.Stat(filepath.Join(dir, boltLogFile))
		_, errWAL := os.Stat(filepath.Join(dir, walDir))
		if errBolt != nil && errWAL != nil {
			s.stable.Close()
			return nil, missingLog(dir, term, fmt.Sprintf("no Raft log (%s/ or %s)", walDir, boltLogFile))
		}
	}
	var base raft.LogStore
	switch kind {
	case LogStoreBolt:
		path := filepath.Join(dir, boltLogFile)
		b, err := openBolt(raftboltdb.Options{Path: path, NoSync: mode == FsyncEverysec})
		if err != nil {
			s.stable.Close()
			return nil, fmt.Errorf("open raft log: %w. In a cluster, move the data directory aside and start the node again: "+
				"it catches up from the leader; a single node cannot be repaired: restore its data directory from a backup", err)
		}
		base, s.sync, s.closeLog = &boltLog{BoltStore: b, path: path}, b.Sync, b.Close
		base = &timedLog{LogStore: base, st: &s.stats, syncs: mode == FsyncAlways}
	default:
		walLog := logger.Named("wal")
		w, err := wal.Open(filepath.Join(dir, walDir), wal.Options{
			SyncEveryBatch: mode == FsyncAlways,
			Preallocate:    true,
			Logf:           func(format string, args ...any) { walLog.Warn(fmt.Sprintf(format, args...)) },
			Inject:         inject,
			OnSync:         s.stats.fsync.Record,
			// A cluster's nodes: a plain fdatasync held a node's only
			// thread for its whole length (wal's aiosync_linux.go).
			SyncBeside: deferLeader,
		})
		if err != nil {
			s.stable.Close()
			return nil, fmt.Errorf("open raft log: %w", err)
		}
		if term > 0 && w.Blank() {
			// Emptied: a log's manifest is written when it is created.
			w.Close()
			s.stable.Close()
			return nil, missingLog(dir, term, fmt.Sprintf("an empty Raft log (%s/ holds neither segments nor its manifest)", walDir))
		}
		base, s.sync, s.closeLog = w, w.Sync, w.Close
		if deferLeader && mode == FsyncAlways {
			if s.leader, err = newLeaderSync(w); err != nil {
				w.Close()
				s.stable.Close()
				return nil, fmt.Errorf("open raft log: %w", err)
			}
			base = s.leader
		}
		base = &timedLog{LogStore: base, st: &s.stats, syncs: mode == FsyncAlways, ownFsync: true}
		s.ownFsync = true
	}
	s.guard = newLogGuard(base, logCacheSize, logger.Named("log"))
	if s.leader != nil {
		s.leader.guard = s.guard
	}
	s.raftStable = &closingStable{StableStore: s.stable, closeStore: s.stable.Close}
	if mode == FsyncEverysec {
		s.wg.Add(1)
		go s.syncEverySecond()
	}
	return s, nil
}

// missingLog is the refusal to start a node whose Raft state (term)
// outlived its log (what): it would start from its last snapshot, or
// nothing, and lose what came after, silently.
func missingLog(dir string, term uint64, what string) error {
	return fmt.Errorf("node: %s holds Raft state (term %d) but %s: the log is missing. "+
		"In a cluster, move the data directory aside and start the node again: it catches up from the leader; "+
		"a single node cannot be repaired: restore its data directory from a backup", dir, term, what)
}

// syncEverySecond syncs the log once a second (everysec). A failing sync
// is a log fault, like a failing append: writes are refused until a sync
// succeeds, since what was acknowledged may not be on disk.
func (s *stores) syncEverySecond() {
	defer s.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	// synced: a sync succeeded since the start; until then what the log
	// held at the start (a previous process's appends, perhaps never
	// synced) is not known to be durable.
	synced := false
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			// An entry is applied only after its append returned, and its
			// append counted it as unsynced before returning: what was
			// applied before the count is read is covered by the sync that
			// follows, or by an earlier one when nothing waits.
			applied := s.appliedIndex()
			entries, cmds := s.stats.unsyncedEntries.Load(), s.stats.unsyncedCommands.Load()
			if entries == 0 && synced {
				s.syncedApplied.Store(applied) // nothing appended since the last sync
				continue
			}
			start := time.Now()
			if err := s.sync(); err != nil {
				s.guard.syncFailed(err)
			} else {
				if !s.ownFsync {
					s.stats.fsync.Record(time.Since(start))
				}
				// Only what was counted before the sync began is covered:
				// an append made while it ran waits for the next one.
				s.stats.durableUpTo(entries, cmds)
				s.syncedApplied.Store(applied)
				synced = true
				s.guard.syncRecovered()
			}
		}
	}
}

// appliedIndex is the state machine's applied index; 0 before the node
// has a state machine.
func (s *stores) appliedIndex() uint64 {
	if f := s.applied.Load(); f != nil {
		return (*f)()
	}
	return 0
}

func (s *stores) logStore() raft.LogStore       { return s.guard }
func (s *stores) stableStore() raft.StableStore { return s.raftStable }

// close ends a held append, then syncs and closes both stores.
func (s *stores) close() error {
	s.guard.close()
	close(s.stop)
	s.wg.Wait()
	if s.leader != nil {
		s.leader.close()
	}
	return errors.Join(s.sync(), s.closeLog(), s.raftStable.close())
}
