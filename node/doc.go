// Package node runs one Goblin node: the Raft instance (hashicorp/raft),
// its log and stable stores (node/wal segments or raft-boltdb/v2 for the
// log, raft-boltdb/v2 for the stable store, behind one seam, logstore.go),
// the snapshot store, and the state machine from raftfsm. The transport
// is the caller's: the cluster package's node-to-node plane, or an
// in-memory one for a single node, which then opens no port.
// It owns the write path (encode, propose, wait until applied), the
// read path (the consistency check that makes a local read linearizable),
// leadership bookkeeping (a barrier entry at the start of every term before
// reads are served), membership changes, and the leader's duty of turning
// expired keys into log entries.
//
// Any node accepts any command. A follower forwards writes to the leader
// through Peers (peers.go, implemented by the cluster package) and answers
// a data entry as soon as the leader has applied it, with the entry's
// index, which the caller waits for here (WaitApplied) before its client's
// next read, so the client reads its own write; other entries (ACL
// changes) are answered once applied here. An entry refused before
// reaching any log is sent again to the next leader within LeaderWait.
//
// No answer claims more than the node knows about a write. Every entry a
// node proposes carries a proposal header (raftfsm/proposal.go): an ID,
// and the term of the leader it is handed to, outside which the state
// machine refuses to apply it. When leadership changes while the entry is
// in flight (Raft reports leadership lost, the leader's answer says so, or
// the forwarding connection breaks) the proposer waits, up to OutcomeWait,
// until it has applied an entry of a later term: by then its entry either
// was applied, and the state machine reported its result to the table of
// proposals in flight (proposals.go), or never will be (ErrNotApplied).
// Only when that cannot be learned in time, with no leader or this node
// cut off, does the write fail with ErrUncertain (write.go).
//
// A follower's linearizable read asks the leader for its read index (the
// commit index, confirmed by a confirmation round that started after the
// read arrived, or by the leader's lease: lease.go) and waits until that
// index is applied here; concurrent reads share rounds. READONLY reads are local, within MaxStaleness of the
// leader's commit: each read index a follower gets is a sample (time the
// request was sent, index), and a read is served while a sample whose
// index is applied here is younger than MaxStaleness (staleness.go).
//
// Under --fsync always a cluster leader fsyncs its own appends while the
// followers store theirs (leadersync.go): Raft may then count the
// leader's copy before it is durable, so the state machine applies, and
// the leader reports committed to its followers or as a read index, only
// what its own log holds durably too.
//
// maxmemory (memory.go) is decided by the leader before it proposes: an
// entry holding a command that may grow memory is refused while the
// leader's Go heap is above the limit, so every node agrees and apply
// never looks at memory.
//
// Backups (backup.go) are reads: a read barrier, then a frozen view of
// the state taken under the keyspace's write lock (raftfsm.FSM.Capture:
// no member is copied), written in the backup package's format while
// applies go on. A backup becomes a cluster's state through
// Raft.Restore on the leader (restore.go): from a file left in a new data
// directory, restored by the first leader before it serves, or from
// GOBLIN RESTORE on a running cluster.
//
// Storage faults are handled where raft meets its stores. Raft's log
// store is a logGuard (logguard.go): a failing append (a full disk, an I/O
// error) becomes the node's log fault, which refuses new writes with
// ErrLogWrite (MISCONF at the edge) until an append succeeds; a leader
// that another voter could replace lets raft step down, one that no other
// node can replace holds the failed batch and retries it, leading and
// serving reads meanwhile. Snapshots go through snapshotStore
// (snapshots.go): the log keeps what the older retained snapshot needs,
// a snapshot that fails to restore is moved aside and an older state
// used, and a node that cannot restore safely stops with what to do
// rather than panic. docs/operations.md tells the operator's side.
//
// It knows nothing of RESP or gossip: the resp package calls it through
// the small interface it declares, the cluster package is behind Peers,
// and errors leave this package as the sentinel values in errors.go,
// translated into Redis wording by resp.
package node
