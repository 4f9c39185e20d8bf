package metrics

import (
	"runtime"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/goblindb/goblin/internal/hist"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/resp"
)

// Edge is what the collector reads of the RESP server (*resp.Server).
type Edge interface {
	Commands() []resp.CommandStat
	Errors() []resp.ErrorCount
	Totals() resp.Totals
	ConnectedClients() int
	BlockedClients() int64
}

// Node is what the collector reads of the node (*node.Node).
type Node interface {
	Status() node.Status
	Metrics() node.Metrics
	View(fn func(ks *keyspace.Keyspace, now int64))
	MaxMemory() uint64
}

var (
	_ Edge = (*resp.Server)(nil)
	_ Node = (*node.Node)(nil)
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("goblin_"+name, help, labels, nil)
}

// The metrics, in the order docs/observability.md lists them.
var (
	dInfo = desc("info", "Always 1; labels name this node and its version.", "id", "version")

	dCommands    = desc("commands_total", "Commands run, by command (INFO commandstats calls).", "command")
	dCmdFailed   = desc("command_errors_total", "Commands that ran and answered an error, by command (failed_calls).", "command")
	dCmdRejected = desc("command_rejected_total", "Commands refused before running (arity, authentication, ACL, OOM), by command (rejected_calls).", "command")
	dCmdSeconds  = desc("command_duration_seconds", "Command latency, by command: a read's run, a write's wait until applied here.", "command")
	dErrors      = desc("error_replies_total", "Error replies, by error code (INFO errorstats).", "code")

	dConnected    = desc("connected_clients", "Client connections open.")
	dConnections  = desc("connections_received_total", "Client connections accepted.")
	dRejectedConn = desc("rejected_connections_total", "Client connections refused by maxclients.")
	dLoopBatches  = desc("event_loop_batches_total", "Batches of requests the event loop ran (--event-loop).")
	dLoopHandOffs = desc("event_loop_handoffs_total", "Connections the event loop handed back to a goroutine of their own for good (a blocking pop, WAIT, MULTI, MONITOR, a reply the socket did not take at once).")
	dBlocked      = desc("blocked_clients", "Clients waiting in a blocking command.")
	dNetIn        = desc("net_input_bytes_total", "Bytes read from clients.")
	dNetOut       = desc("net_output_bytes_total", "Bytes written to clients.")
	dHits         = desc("keyspace_hits_total", "Keys read commands found.")
	dMisses       = desc("keyspace_misses_total", "Keys read commands did not find.")
	dExpired      = desc("expired_keys_total", "Keys removed by expiry on this node.")

	dKeys     = desc("db_keys", "Keys, by database.", "db")
	dExpiring = desc("db_keys_expiring", "Keys with a time to live, by database.", "db")
	dMembers  = desc("db_members", "Sorted-set members, by database.", "db")

	dHeap      = desc("memory_heap_bytes", "Go heap in use (INFO used_memory; what maxmemory is compared with).")
	dRSS       = desc("memory_rss_bytes", "Resident set size of the process.")
	dMaxMemory = desc("memory_max_bytes", "maxmemory (0: no limit).")

	dRaftState    = desc("raft_state", "1 for this node's Raft state, 0 for the others.", "state")
	dTerm         = desc("raft_term", "Current Raft term.")
	dCommit       = desc("raft_commit_index", "Index of the last log entry known committed.")
	dApplied      = desc("raft_applied_index", "Index of the last log entry applied to the state here.")
	dLastContact  = desc("raft_last_contact_seconds", "On a follower, time since the leader was last heard from (-1: never).")
	dFollowerApp  = desc("raft_follower_applied_index", "On the leader, each follower's applied index as it last reported it.", "follower")
	dFollowerLag  = desc("raft_follower_lag_entries", "On the leader, committed entries each follower had yet to apply at its last report.", "follower")
	dFollowerSeen = desc("raft_follower_last_report_seconds", "On the leader, time since each follower last reported its progress.", "follower")
	dAppend       = desc("raft_log_append_duration_seconds", "Raft log appends (one write per batch; with --fsync always, the fsync too, except on a cluster's leader, which syncs beside replication).")
	dFsync        = desc("raft_log_fsync_duration_seconds", "Raft log fsyncs (its _count counts them).")
	dSyncEntries  = desc("raft_log_synced_entries_total", "Entries made durable by fsyncs (each entry of a group commit's batch counts); per fsync: divide by raft_log_fsync_duration_seconds_count.")
	dSyncCmds     = desc("raft_log_synced_commands_total", "Client commands in the entries made durable by fsyncs.")
	dLeaderChg    = desc("raft_leader_changes_total", "Leaders this node has seen elected.")
	dSnapSeconds  = desc("raft_snapshot_duration_seconds", "Time to write a snapshot.")
	dSnapBytes    = desc("raft_snapshot_size_bytes", "Size of the last snapshot written.")
	dReadRounds   = desc("raft_read_rounds_total", "Confirmation rounds the leader ran to confirm its leadership for linearizable reads (a lease saves them).")
	dReadIndex    = desc("raft_read_index_requests_total", "Read indexes a follower asked of the leader for linearizable reads; concurrent reads share one request.")
	dReadIndexed  = desc("raft_read_index_reads_total", "Reads on a follower that waited for a read index from the leader; per request: divide by raft_read_index_requests_total.")
	dOverdue      = desc("raft_group_commit_overdue_total", "Batches of held writes handed to Raft because they had been held 100 ms with the batch before them still in flight.")
	dRounds       = desc("raft_group_commit_round_seconds", "Batches of writes this node handed to Raft as leader, from the hand-over until applied here: one commit round (append, replication, the fsyncs, the apply). Its _sum over the time elapsed is the share of time a batch was in flight.")
	dForwarded    = desc("raft_forwarded_writes_total", "Write entries forwarded to the leader (sent, by a follower) or accepted from a follower (received, by the leader).", "direction")
	dFailed       = desc("raft_failed_entries_total", "Log entries the state machine recorded as failed.")
	dLogFailing   = desc("raft_log_write_failing", "1 while the Raft log cannot be written (writes answer MISCONF).")
	dSnapFailing  = desc("raft_snapshot_failing", "1 while snapshots cannot be written.")

	dGossip = desc("gossip_members", "Nodes gossip knows, by state (alive, suspect, dead, left).", "state")
)

// allDescs lists every metric (Describe): a scrape sends a metric only
// when there is something to say (per-command series once a command ran),
// but the set of metrics is fixed.
var allDescs = []*prometheus.Desc{
	dInfo, dCommands, dCmdFailed, dCmdRejected, dCmdSeconds, dErrors,
	dConnected, dConnections, dRejectedConn, dLoopBatches, dLoopHandOffs, dBlocked, dNetIn, dNetOut, dHits, dMisses, dExpired,
	dKeys, dExpiring, dMembers, dHeap, dRSS, dMaxMemory,
	dRaftState, dTerm, dCommit, dApplied, dLastContact, dFollowerApp, dFollowerLag, dFollowerSeen,
	dAppend, dFsync, dSyncEntries, dSyncCmds, dLeaderChg, dSnapSeconds, dSnapBytes, dForwarded, dReadRounds, dReadIndex, dReadIndexed, dOverdue, dRounds,
	dFailed, dLogFailing, dSnapFailing, dGossip,
}

var raftStates = []string{"Follower", "Candidate", "Leader", "Shutdown"}

var gossipStates = []string{"alive", "suspect", "dead", "left"}

// Collector turns a node's counters into metrics at each scrape.
type Collector struct {
	edge    Edge
	node    Node
	version string
}

// NewCollector returns a collector of edge's and n's measurements.
func NewCollector(edge Edge, n Node, version string) *Collector {
	return &Collector{edge: edge, node: n, version: version}
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) { c.describeAll(ch) }

func (c *Collector) describeAll(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the metrics as they are now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.node.Status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	histogram := func(d *prometheus.Desc, s *hist.Snapshot, labels ...string) {
		ch <- prometheus.MustNewConstHistogram(d, s.Count, s.Sum.Seconds(), s.Cumulative(), labels...)
	}
	gauge(dInfo, 1, st.ID, c.version)

	for _, cs := range c.edge.Commands() {
		counter(dCommands, float64(cs.Calls), cs.Name)
		counter(dCmdFailed, float64(cs.Failed), cs.Name)
		counter(dCmdRejected, float64(cs.Rejected), cs.Name)
		histogram(dCmdSeconds, cs.Latency, cs.Name)
	}
	for _, e := range c.edge.Errors() {
		counter(dErrors, float64(e.Count), e.Code)
	}
	t := c.edge.Totals()
	gauge(dConnected, float64(c.edge.ConnectedClients()))
	counter(dConnections, float64(t.Connections))
	counter(dRejectedConn, float64(t.RejectedConnections))
	counter(dLoopBatches, float64(t.LoopBatches))
	counter(dLoopHandOffs, float64(t.LoopHandOffs))
	gauge(dBlocked, float64(c.edge.BlockedClients()))
	counter(dNetIn, float64(t.NetInput))
	counter(dNetOut, float64(t.NetOutput))
	counter(dHits, float64(t.Hits))
	counter(dMisses, float64(t.Misses))

	c.collectKeyspace(gauge, counter)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gauge(dHeap, float64(ms.HeapAlloc))
	gauge(dRSS, float64(resp.RSS()))
	gauge(dMaxMemory, float64(c.node.MaxMemory()))

	c.collectRaft(st, gauge, counter, histogram)
}

// collectKeyspace counts keys and members per database, under the
// keyspace's read lock.
func (c *Collector) collectKeyspace(gauge, counter func(*prometheus.Desc, float64, ...string)) {
	type dbCounts struct{ keys, expiring, members int }
	var dbs [keyspace.NumDBs]dbCounts
	var expired uint64
	c.node.View(func(ks *keyspace.Keyspace, _ int64) {
		for i := range dbs {
			d := ks.DB(i)
			expired += d.ExpiredKeys()
			dbs[i].keys, dbs[i].expiring = d.Len(), d.Expires()
			if d.Len() == 0 {
				continue
			}
			d.EachUnordered(0, func(_ string, e *keyspace.Entry) bool {
				if e.Z != nil {
					dbs[i].members += e.Z.Len()
				}
				return true
			})
		}
	})
	counter(dExpired, float64(expired))
	for i, d := range dbs {
		if d.keys == 0 {
			continue // as INFO keyspace: only databases with keys
		}
		db := "db" + strconv.Itoa(i)
		gauge(dKeys, float64(d.keys), db)
		gauge(dExpiring, float64(d.expiring), db)
		gauge(dMembers, float64(d.members), db)
	}
}

func (c *Collector) collectRaft(st node.Status, gauge, counter func(*prometheus.Desc, float64, ...string), histogram func(*prometheus.Desc, *hist.Snapshot, ...string)) {
	for _, s := range raftStates {
		v := 0.0
		if s == st.State {
			v = 1
		}
		gauge(dRaftState, v, s)
	}
	gauge(dTerm, float64(st.Term))
	gauge(dCommit, float64(st.CommitIndex))
	gauge(dApplied, float64(st.Applied))
	lc := -1.0
	if st.LastContact >= 0 {
		lc = st.LastContact.Seconds()
	}
	if st.State == "Leader" {
		lc = 0
	}
	gauge(dLastContact, lc)
	gossip := map[string]int{}
	for _, ns := range st.Nodes {
		if ns.Gossip != "unknown" {
			gossip[ns.Gossip]++
		}
		if st.State != "Leader" || ns.Self || ns.Suffrage == "none" || ns.Since < 0 {
			continue
		}
		gauge(dFollowerApp, float64(ns.Applied), ns.ID)
		lag := 0.0
		if st.CommitIndex > ns.Applied {
			lag = float64(st.CommitIndex - ns.Applied)
		}
		gauge(dFollowerLag, lag, ns.ID)
		gauge(dFollowerSeen, ns.Since.Seconds(), ns.ID)
	}
	for _, s := range gossipStates {
		gauge(dGossip, float64(gossip[s]), s)
	}

	m := c.node.Metrics()
	histogram(dAppend, m.Append)
	histogram(dFsync, m.Fsync)
	counter(dSyncEntries, float64(m.SyncedEntries))
	counter(dSyncCmds, float64(m.SyncedCommands))
	counter(dLeaderChg, float64(m.LeaderChanges))
	histogram(dSnapSeconds, m.SnapshotTime)
	gauge(dSnapBytes, float64(m.SnapshotSize))
	counter(dForwarded, float64(m.ForwardedSent), "sent")
	counter(dForwarded, float64(m.ForwardedReceived), "received")
	counter(dReadRounds, float64(m.ReadRounds))
	counter(dReadIndex, float64(m.ReadIndexRequests))
	counter(dReadIndexed, float64(m.ReadIndexReads))
	counter(dOverdue, float64(m.GroupOverdue))
	histogram(dRounds, m.GroupRounds)
	counter(dFailed, float64(st.FailedEntries))
	gauge(dLogFailing, boolFloat(st.LogWriteErr != nil))
	gauge(dSnapFailing, boolFloat(st.SnapshotErr != nil))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
