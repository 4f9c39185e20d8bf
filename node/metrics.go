package node

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/hist"
	"github.com/goblindb/goblin/raftfsm"
)

// logStats measures the Raft log store: how long appends and fsyncs take,
// and how many entries and client commands fsyncs made durable. Under
// fsync always every append ends with an fsync; under everysec the
// entries appended since the last sync count towards the next one.
type logStats struct {
	append hist.Histogram // StoreLogs, fsync included under always
	fsync  hist.Histogram
	// synced* count what fsyncs made durable; unsynced* what is appended
	// and waits for the next sync (everysec).
	syncedEntries, syncedCommands     atomic.Uint64
	unsyncedEntries, unsyncedCommands atomic.Uint64
}

// durable records that everything appended so far is on stable storage.
func (s *logStats) durable() {
	s.syncedEntries.Add(s.unsyncedEntries.Swap(0))
	s.syncedCommands.Add(s.unsyncedCommands.Swap(0))
}

// durableUpTo records that the entries and commands counted as unsynced
// when a sync began are on stable storage; what was appended while it ran
// waits for the next.
func (s *logStats) durableUpTo(entries, cmds uint64) {
	s.unsyncedEntries.Add(-entries)
	s.unsyncedCommands.Add(-cmds)
	s.syncedEntries.Add(entries)
	s.syncedCommands.Add(cmds)
}

// timedLog measures a log store's appends. syncs: each append ends with an
// fsync (fsync always). ownFsync: the store times its fsyncs itself
// (node/wal's OnSync); otherwise (raft-boltdb) an append under always is
// taken as one fsync, timed whole.
type timedLog struct {
	raft.LogStore
	st       *logStats
	syncs    bool
	ownFsync bool
}

var _ raft.MonotonicLogStore = (*timedLog)(nil)

func (t *timedLog) StoreLog(l *raft.Log) error { return t.StoreLogs([]*raft.Log{l}) }

// IsMonotonic passes on whether the store is a raft.MonotonicLogStore:
// raft then clears the whole log after installing a snapshot.
func (t *timedLog) IsMonotonic() bool {
	m, ok := t.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (t *timedLog) StoreLogs(logs []*raft.Log) error {
	start := time.Now()
	err := t.LogStore.StoreLogs(logs)
	d := time.Since(start)
	t.st.append.Record(d)
	if err != nil {
		return err
	}
	entries, cmds := 0, 0
	for _, l := range logs {
		if l.Type != raft.LogCommand {
			entries++
			continue
		}
		e, c := raftfsm.Counts(l.Data)
		entries += e
		cmds += c
	}
	t.st.unsyncedEntries.Add(uint64(entries))
	t.st.unsyncedCommands.Add(uint64(cmds))
	if t.syncs {
		if !t.ownFsync {
			t.st.fsync.Record(d)
		}
		t.st.durable()
	}
	return nil
}

// nodeStats are the node's own counters beyond Raft's.
type nodeStats struct {
	leaderChanges     atomic.Uint64
	forwardedSent     atomic.Uint64
	forwardedReceived atomic.Uint64
	readRounds        atomic.Uint64
	snapshotTime      hist.Histogram
	snapshotSize      atomic.Int64
}

// Metrics are a node's measurements at one moment, for the metrics
// endpoint.
type Metrics struct {
	// Append and Fsync are the log store's append and fsync latencies
	// (Fsync.Count counts fsyncs); SyncedEntries and SyncedCommands the
	// Raft entries and client commands fsyncs made durable.
	Append, Fsync                 *hist.Snapshot
	SyncedEntries, SyncedCommands uint64
	// LeaderChanges counts the leaders this node has seen elected.
	LeaderChanges uint64
	// ForwardedSent counts the write entries this node forwarded to a
	// leader; ForwardedReceived those it accepted as leader.
	ForwardedSent, ForwardedReceived uint64
	// GroupOverdue counts the batches of held writes group commit handed
	// to Raft because they had been held holdLimit, not because the batch
	// before them was applied.
	GroupOverdue uint64
	// GroupRounds is how long the batches group commit handed to Raft
	// took, from the hand-over until applied here: the commit rounds of
	// the writes this node proposed as leader.
	GroupRounds *hist.Snapshot
	// ReadRounds counts the confirmation rounds this node ran as leader to
	// confirm it still leads, for linearizable reads (leases save them).
	ReadRounds uint64
	// ReadIndexRequests counts the read indexes this node asked of the
	// leader as a follower (one per round, shared by the reads waiting),
	// ReadIndexReads the linearizable reads and staleness samples that
	// waited for them.
	ReadIndexRequests, ReadIndexReads uint64
	// SnapshotTime is how long writing snapshots took; SnapshotSize the
	// size in bytes of the last one written.
	SnapshotTime *hist.Snapshot
	SnapshotSize int64
}

// Metrics returns the node's measurements.
func (n *Node) Metrics() Metrics {
	ls := &n.stores.stats
	return Metrics{
		Append:            ls.append.Snapshot(),
		Fsync:             ls.fsync.Snapshot(),
		SyncedEntries:     ls.syncedEntries.Load(),
		SyncedCommands:    ls.syncedCommands.Load(),
		LeaderChanges:     n.stats.leaderChanges.Load(),
		ForwardedSent:     n.stats.forwardedSent.Load(),
		ForwardedReceived: n.stats.forwardedReceived.Load(),
		ReadRounds:        n.stats.readRounds.Load(),
		ReadIndexRequests: n.leaderReads.runs.Load(),
		ReadIndexReads:    n.leaderReads.callers.Load(),
		GroupOverdue:      n.group.overdue.Load(),
		GroupRounds:       n.group.rounds.Snapshot(),
		SnapshotTime:      n.stats.snapshotTime.Snapshot(),
		SnapshotSize:      n.stats.snapshotSize.Load(),
	}
}

// watchLeaders counts the leaders elected, as raft observes them.
func (n *Node) watchLeaders() {
	defer n.wg.Done()
	ch := make(chan raft.Observation, 8)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	n.raft.RegisterObserver(obs)
	defer n.raft.DeregisterObserver(obs)
	for {
		select {
		case <-n.stop:
			return
		case o := <-ch:
			if lo := o.Data.(raft.LeaderObservation); lo.LeaderID != "" {
				n.stats.leaderChanges.Add(1)
			}
		}
	}
}
