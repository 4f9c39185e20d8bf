package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node/wal"
	"github.com/goblindb/goblin/raftfsm"
)

// Config configures a node.
type Config struct {
	ID       string // Raft server ID; defaults to the Raft address
	DataDir  string
	RaftAddr string // Raft address (host:port); the ID defaults to it
	// RaftAdvertise is the Raft address peers use; defaults to RaftAddr.
	RaftAdvertise string
	Fsync         Fsync
	// LogStore chooses the Raft log store (default: keep the data
	// directory's, node/wal for a new one).
	LogStore LogStore
	// Bootstrap makes a node with no Raft state bootstrap a single-voter
	// cluster of itself. A node with state never bootstraps again.
	Bootstrap bool
	// AdoptID: the operator chose no ID (it is derived from an address).
	// A single node (Bootstrap, no Transport) whose data directory was
	// created under another ID then keeps that one (singlenode.go).
	AdoptID bool
	// Rules are the packed-layout rules this node's operator configured;
	// a leader replicates them when they differ from the state's.
	Rules keyspace.Rules
	// Transport carries Raft's RPCs: the cluster's node-to-node plane.
	// Nil: raft's in-memory transport at RaftAdvertise, for a single node,
	// which then opens no port at all.
	Transport raft.Transport
	Logger    hclog.Logger
	// Raft tuning; zero values take the defaults in New (heartbeat and
	// election timeouts 300ms).
	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	CommitTimeout    time.Duration
	// SnapshotThreshold is how many log entries trigger a snapshot, and
	// SnapshotInterval how often Raft checks (zero: Raft's default, 2m).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration

	// Peers connects a follower to its leader (cluster mode). Without it
	// the node serves only while it leads: a single-node cluster.
	Peers Peers
	// LeaderWait bounds how long a request waits for a leader to be known
	// and reachable before failing with ErrNoLeader (default 5s).
	LeaderWait time.Duration
	// MaxStaleness bounds READONLY reads on a follower: a read reflects
	// every write acknowledged more than MaxStaleness before it, or is
	// refused with ErrStale (staleness.go; default 5s).
	MaxStaleness time.Duration
	// LeaseReads lets the leader serve linearizable reads under a lease
	// taken from its confirmation rounds instead of a round per read
	// (lease.go). It assumes every node runs with the same
	// HeartbeatTimeout and clocks whose rates differ by less than 10%.
	LeaseReads bool
	// OutcomeWait bounds how long a write whose leader lost leadership
	// while it was in flight waits to learn whether it was committed
	// before it fails with ErrUncertain (default 5s).
	OutcomeWait time.Duration

	// logInject, in tests, plays a failing disk under the wal log store
	// (wal.Options.Inject).
	logInject func(wal.Op) error
	// noGroupCommit, in benchmarks, hands every entry to Raft at once
	// (groupcommit.go), to measure what group commit changes.
	noGroupCommit bool
}

// Node is one running Goblin node.
type Node struct {
	cfg    Config
	log    hclog.Logger
	raft   *raft.Raft
	fsm    *raftfsm.FSM
	stores *stores
	snaps  *snapshotStore
	trans  raft.Transport
	// raftRef is raft for the store's goroutines, which may run before
	// New has set n.raft.
	raftRef atomic.Pointer[raft.Raft]

	// ready is the term in which this node, as leader, has applied its
	// own barrier entry: from then on its commit index covers every
	// acknowledged write, and reads may use it.
	readyTerm atomic.Uint64
	// singleVoter is true while the configuration has one voter (this
	// node): leadership then needs no confirmation round.
	singleVoter atomic.Bool
	// verifier batches the leader's confirmation rounds (confirm.go),
	// leaderReads a follower's read-index requests to the leader.
	verifier    batcher
	leaderReads batcher
	// lease lets the leader skip the rounds (lease.go); heartbeat and
	// electionTimeout are Raft's settings.
	lease                      lease
	heartbeat, electionTimeout time.Duration
	peers                      Peers
	// stale tracks how fresh READONLY reads on a follower are
	// (staleness.go).
	stale staleness

	// mem is maxmemory's state (memory.go).
	mem memoryLimit
	// pendingState: restores (restore.go); backupMu runs backups one at
	// a time (backup.go).
	pendingState
	backupMu sync.Mutex

	// keyReady is where the state machine's Ready hook goes (OnKeyReady).
	keyReady atomic.Pointer[func(db int, key []byte)]

	// props are this node's entries in flight (proposals.go).
	props *proposals
	// group hands this node's entries to Raft in batches (groupcommit.go).
	group *groupCommit

	// stats are counters for the metrics endpoint (metrics.go).
	stats nodeStats
	// terms is the context a round to the leader abandons on a new
	// term (termctx.go).
	terms atomic.Pointer[termCtx]

	notify chan bool
	stop   chan struct{}
	wg     sync.WaitGroup
	closed atomic.Bool
	// stopping: the node is on its way to Close (Stopping).
	stopping atomic.Bool
	closeErr error
	closeMu  sync.Mutex
}

// Stopping tells the node it is about to be closed (goblind on SIGTERM,
// before its clients' connections close): Raft's complaints about peers
// from then on, those stopping with it included, are part of the stop,
// and logged as such; and an append held while the log cannot be written
// (a full disk) ends now with its error, so the writes waiting for it are
// answered and their connections can close.
func (n *Node) Stopping() {
	n.stopping.Store(true)
	n.stores.guard.close()
}

// New starts a node: opens its stores, restores its state, and starts Raft.
func New(cfg Config) (*Node, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("node: DataDir is required")
	}
	if cfg.RaftAdvertise == "" {
		cfg.RaftAdvertise = cfg.RaftAddr
	}
	if cfg.ID == "" {
		cfg.ID, cfg.AdoptID = cfg.RaftAdvertise, true
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "goblin", Level: hclog.Info, Output: os.Stderr})
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	cfg.LeaderWait = orDefault(cfg.LeaderWait, 5*time.Second)
	cfg.MaxStaleness = orDefault(cfg.MaxStaleness, 5*time.Second)
	cfg.OutcomeWait = orDefault(cfg.OutcomeWait, 5*time.Second)
	n := &Node{cfg: cfg, log: cfg.Logger, fsm: raftfsm.New(), props: newProposals(), notify: make(chan bool, 16), stop: make(chan struct{}), peers: cfg.Peers}
	n.fsm.OnProposal = n.props.applied
	n.group = newGroupCommit(n.stop)
	n.group.off = cfg.noGroupCommit
	n.fsm.OnApply = func(uint64) { n.group.applied() }
	n.fsm.OnGroup = n.group.groupApplied
	// A snapshot clones the whole state; once it is written the clone is
	// garbage and the heap has just peaked at twice the state. Collect it
	// and hand the pages back now rather than keep them resident until
	// the runtime gets round to it (one forced GC per snapshot, at most
	// every SnapshotInterval).
	n.fsm.OnSnapshotReleased = debug.FreeOSMemory
	n.fsm.Logger = cfg.Logger.Named("fsm")
	n.verifier.fn = n.confirmLeadership
	n.leaderReads.fn = n.leaderReadIndex
	n.leaderReads.limit = readyWait
	n.fsm.Applier().Ready = func(db int, key []byte) {
		if f := n.keyReady.Load(); f != nil {
			(*f)(db, key)
		}
	}

	// A cluster leader fsyncs its appends beside replication
	// (leadersync.go); the transport then carries its capped commit index.
	_, preVote := cfg.Transport.(raft.WithPreVote)
	st, err := openStores(cfg.DataDir, cfg.Fsync, cfg.LogStore, preVote, cfg.logInject, cfg.Logger)
	if err != nil {
		return nil, err
	}
	n.stores = st
	applied := n.fsm.Applied
	st.applied.Store(&applied)
	// What New opened is closed again, last first, if it fails.
	var opened []func()
	fail := func(err error) (*Node, error) {
		for i := len(opened) - 1; i >= 0; i-- {
			opened[i]()
		}
		return nil, err
	}
	opened = append(opened, func() { st.close() })
	snaps, err := newSnapshotStore(cfg.DataDir, st.logStore(), cfg.Logger.Named("snapshot"))
	if err != nil {
		return fail(fmt.Errorf("node: snapshot store: %w", err))
	}
	if err := snaps.checkLog(); err != nil {
		return fail(err)
	}
	if cfg.Bootstrap && cfg.Transport == nil {
		id, err := singleNodeID(st, snaps, cfg.ID, cfg.AdoptID, cfg.Logger)
		if err != nil {
			return fail(err)
		}
		cfg.ID, n.cfg.ID = id, id
	}
	if err := checkStableState(st, snaps, cfg.ID, cfg.Logger); err != nil {
		return fail(err)
	}
	n.snaps = snaps
	snaps.written = func(d time.Duration, size int64) {
		n.stats.snapshotTime.Record(d)
		n.stats.snapshotSize.Store(size)
	}
	st.guard.keepAfter = snaps.keepAfter
	st.guard.hold = n.holdFailedAppend
	var turn *applyTurn
	if cfg.Transport != nil {
		// A cluster node. Its leader's own copy is synced beside the
		// followers' (leaderSync, opened only for a cluster node under
		// --fsync always): entries are sent and applied capped at it.
		n.trans = cfg.Transport
		var durable func(uint64)
		if st.leader != nil {
			n.trans = &capTransport{Transport: cfg.Transport, ls: st.leader}
			durable = st.leader.wait
		}
		turn = newApplyTurn(durable)
		n.fsm.BeforeApply = turn.before
	} else {
		// A single node talks to no peer: no port is opened for Raft.
		_, n.trans = raft.NewInmemTransport(raft.ServerAddress(cfg.RaftAdvertise))
	}
	opened = append(opened, n.closeTransport)

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	single := cfg.Transport == nil // a single node: no peer
	rc.Logger = raftLogger{Logger: cfg.Logger.Named("raft"), single: single, stopping: &n.stopping}
	rc.NotifyCh = n.notify
	rc.BatchApplyCh = true
	// Raft's queue of proposals holds maxAppendEntries, and a leader sends
	// a follower up to that many entries a request. Group commit makes a
	// batch one entry, so a few suffice; Raft also allocates and clears a
	// slice of that many pointers for each batch it commits, which cost
	// about 3% of a lone client's write CPU at 256.
	rc.MaxAppendEntries = maxAppendEntries
	// A leader whose removal it commits steps down instead of stopping
	// Raft: a live node named by GOBLIN REMOVE is added back by the next
	// leader, and a node whose Raft had stopped would then count as a
	// voter that never votes. A node leaving for good stops on its own.
	rc.ShutdownOnRemove = false
	// Failover time. A follower starts an election once it has heard
	// nothing from the leader for HeartbeatTimeout, checked at random
	// intervals of one to two HeartbeatTimeouts, so it notices a dead
	// leader 1-3 HeartbeatTimeouts after the leader's last message. A
	// follower that still knows a leader refuses to vote (and pre-vote,
	// which is on: a node cut off and back cannot force an election), so
	// the election ends once the second of two surviving voters has
	// noticed too: at most about 3 HeartbeatTimeouts. 300ms keeps the
	// unavailability after a leader crash under 1.5 s at the 99th
	// percentile on 2 shared vCPUs (docs/cluster.md, "Failover,
	// measured", has the figures: 1 s gave 2.2 s at the median and 5.5 s
	// at worst); under load it caused no spurious election there. The
	// leader gives up leading after the same time without hearing from a
	// majority, so a leader cut off stops accepting writes about when the
	// others elect a new one.
	def := DefaultHeartbeat
	if single {
		// A single node has no peer to wait for or to be cut off from:
		// it elects itself as soon as Raft's follower gives up waiting
		// for a leader, so that wait sets how long after a start (the
		// port already answering) writes wait for a leader.
		def = SingleNodeHeartbeat
	}
	rc.HeartbeatTimeout = orDefault(cfg.HeartbeatTimeout, def)
	rc.ElectionTimeout = orDefault(cfg.ElectionTimeout, max(rc.HeartbeatTimeout, def))
	rc.LeaderLeaseTimeout = rc.HeartbeatTimeout
	n.heartbeat, n.electionTimeout = rc.HeartbeatTimeout, rc.ElectionTimeout
	// Followers learn the commit index from the leader's next message,
	// which Raft sends at the latest CommitTimeout after the last one.
	// Follower reads and forwarded writes wait for exactly that, so it
	// bounds their latency: 5ms rather than Raft's 50ms costs an idle
	// leader a few hundred empty appends a second per follower (measured
	// on 2 vCPUs: an idle 3-node leader at 7% of a core instead of 2.4%,
	// followers 2.8% instead of 1%; a sequential write through a
	// follower in 11ms instead of 81ms at the median; 2ms on the leader).
	rc.CommitTimeout = orDefault(cfg.CommitTimeout, 5*time.Millisecond)
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
		rc.TrailingLogs = cfg.SnapshotThreshold
	}

	if cfg.Bootstrap {
		has, err := raft.HasExistingState(st.logStore(), st.stableStore(), snaps)
		if err != nil {
			return fail(err)
		}
		if !has {
			conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: n.trans.LocalAddr()}}}
			if err := raft.BootstrapCluster(rc, st.logStore(), st.stableStore(), snaps, n.trans, conf); err != nil {
				return fail(fmt.Errorf("node: bootstrap: %w", err))
			}
			n.log.Info("bootstrapped a new cluster", "id", cfg.ID)
		}
	}
	if cfg.LeaseReads && cfg.Transport != nil {
		// A node that may have answered a leader's heartbeats before it
		// stopped waits until no lease they granted can still run before
		// it can vote (lease.go).
		has, err := raft.HasExistingState(st.logStore(), st.stableStore(), snaps)
		if err != nil {
			return fail(err)
		}
		if has {
			n.log.Info("waiting out any leader lease before joining Raft", "wait", rc.HeartbeatTimeout)
			time.Sleep(rc.HeartbeatTimeout)
		}
	}
	r, err := raft.NewRaft(rc, n.fsm, st.logStore(), st.stableStore(), snaps, n.trans)
	if err != nil && snaps.fromLogStart(err) {
		// No snapshot restores, but the log holds every entry: replay it.
		r, err = raft.NewRaft(rc, n.fsm, st.logStore(), st.stableStore(), snaps, n.trans)
	}
	if err != nil {
		if e := snaps.restoreFailed(err); e != err {
			return fail(e)
		}
		return fail(fmt.Errorf("node: start raft: %w", err))
	}
	n.raft = r
	n.group.raft = r
	if turn != nil {
		turn.raft.Store(r)
	}
	if st.leader != nil {
		// A single voter has no follower to sync beside: it syncs each
		// append as it is made, and holds a failed one (logguard.go).
		st.leader.setRaft(func() bool { return r.State() == raft.Leader && !n.singleVoter.Load() }, func() {
			if r.State() == raft.Leader {
				n.log.Warn("handing leadership over: this node's log cannot be synced")
				r.LeadershipTransfer()
			}
		})
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.group.run()
	}()
	n.loadPendingRestore()
	n.raftRef.Store(r)
	if idx, term := lastSnapshot(r); idx > 0 {
		snaps.afterRestore(idx, term)
	}
	n.terms.Store(newTermCtx())
	n.wg.Add(5)
	go n.watchTerms()
	go n.watchLeaders()
	go n.watchLeadership()
	go n.expireLoop()
	go n.watchGroupGate()
	return n, nil
}

// lastSnapshot returns the index and term of the snapshot raft restored
// (0 if none).
func lastSnapshot(r *raft.Raft) (index, term uint64) {
	st := r.Stats()
	index, _ = strconv.ParseUint(st["last_snapshot_index"], 10, 64)
	term, _ = strconv.ParseUint(st["last_snapshot_term"], 10, 64)
	return index, term
}

// DefaultHeartbeat is a cluster node's Raft heartbeat timeout, and the
// shortest election timeout, when Config leaves them 0.
const DefaultHeartbeat = 300 * time.Millisecond

// SingleNodeHeartbeat is a single node's (no Transport) Raft heartbeat and
// election timeout when Config leaves them 0: it takes 1-2 of them to
// lead after starting (DefaultHeartbeat made writes sent right after a
// start wait 0.3-0.6 s).
const SingleNodeHeartbeat = 20 * time.Millisecond

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func (n *Node) closeTransport() {
	if c, ok := n.trans.(io.Closer); ok {
		c.Close()
	}
}

// Close shuts the node down: its transport and Raft first (no more
// applies), then the stores, synced. It is safe to call more than once.
func (n *Node) Close() error {
	n.closeMu.Lock()
	defer n.closeMu.Unlock()
	n.stopping.Store(true)
	if n.closed.Swap(true) {
		return n.closeErr
	}
	close(n.stop)
	// A held append ends (with its error), so that waits on raft futures
	// (a new leader's barrier) and raft's shutdown can finish.
	n.stores.guard.close()
	if n.stores.leader != nil {
		// Raft's state machine may wait for the log's sync (leadersync.go).
		n.stores.leader.release()
	}
	n.wg.Wait()
	// The transport goes first: Raft's shutdown waits for its requests
	// under way, and one to a peer that vanished (its container stopped
	// with it, as nodes stopped together do) would wait out the whole
	// request timeout; closed, their connections fail at once.
	n.closeTransport()
	err := n.raft.Shutdown().Error()
	if e := n.stores.close(); err == nil {
		err = e
	}
	n.closeErr = err
	return err
}

// OnKeyReady sets the function the state machine calls when a write
// leaves a sorted set with members (db -1 and a nil key: after a snapshot
// is installed, any key may have). The RESP edge wakes blocked clients
// with it. It runs under the keyspace's write lock and must not block.
func (n *Node) OnKeyReady(fn func(db int, key []byte)) { n.keyReady.Store(&fn) }

// ID returns the node's Raft server ID.
func (n *Node) ID() string { return n.cfg.ID }

// Raft exposes the Raft instance (for cluster management and stats).
func (n *Node) Raft() *raft.Raft { return n.raft }

// FSM exposes the state machine.
func (n *Node) FSM() *raftfsm.FSM { return n.fsm }

// Config returns the node's configuration.
func (n *Node) Config() Config { return n.cfg }

// IsLeader reports whether this node is the Raft leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Ready reports whether this node is a leader whose term barrier has been
// applied, so it can serve linearizable reads and accept writes.
func (n *Node) Ready() bool {
	t := n.readyTerm.Load()
	return t != 0 && n.IsLeader() && t == n.currentTerm()
}

func (n *Node) currentTerm() uint64 { return n.raft.CurrentTerm() }

// View runs fn with the keyspace under a read lock, with the local clock.
func (n *Node) View(fn func(ks *keyspace.Keyspace, now int64)) {
	ks := n.fsm.KS()
	ks.RLock()
	defer ks.RUnlock()
	fn(ks, n.Now())
}

// ReadView read-locks the keyspace for a run of reads and returns it with
// the local clock; the caller calls ks.RUnlock.
func (n *Node) ReadView() (*keyspace.Keyspace, int64) {
	ks := n.fsm.KS()
	ks.RLock()
	return ks, n.Now()
}

// Now returns the clock reads and proposals use: Unix milliseconds.
func (n *Node) Now() int64 { return time.Now().UnixMilli() }

// waitApplied waits until the local state machine has applied index.
func (n *Node) waitApplied(ctx context.Context, index uint64) error {
	if n.fsm.Applied() >= index { // the usual case: no channel to make
		return nil
	}
	select {
	case <-n.fsm.WaitApplied(index):
		return nil
	case <-ctx.Done():
		return ErrTimeout
	case <-n.stop:
		return ErrClosed
	}
}
