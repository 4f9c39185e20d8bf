// Package node runs one Goblin node: the Raft instance (hashicorp/raft),
// its log and stable stores (node/wal segments or raft-boltdb/v2 for the
// log, raft-boltdb/v2 for the stable store, behind one seam, logstore.go),
// the snapshot store, and the state machine from raftfsm. The transport
// is the caller's: the cluster package's node-to-node plane, or an
// in-memory one for a single node, which then opens no port.
// It owns the write path (encode, propose, wait until applied here), the
// read path (the consistency check that makes a local read linearizable),
// leadership bookkeeping (a barrier entry at the start of every term before
// reads are served), membership changes, and the leader's duty of turning
// expired keys into log entries.
//
// Any node accepts any command. A follower forwards writes to the leader
// through Peers (peers.go, implemented by the cluster package) and answers
// once the entry is applied here too, so its client reads its own write;
// an entry refused before reaching any log is sent again to the next
// leader within LeaderWait. A follower's linearizable read asks the leader
// for its read index (the commit index, confirmed by a heartbeat round that
// started after the read arrived) and waits until that index is applied
// here; concurrent reads share rounds. READONLY reads are local, refused
// once the leader has been silent longer than MaxStaleness.
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
