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
// maxmemory (memory.go) is decided by the leader before it proposes: an
// entry holding a command that may grow memory is refused while the
// leader's Go heap is above the limit, so every node agrees and apply
// never looks at memory.
//
// Backups (backup.go) are reads: a read barrier, then a copy of the state
// taken under the keyspace's read lock (raftfsm.FSM.Capture), written in
// the backup package's format. A backup becomes a cluster's state through
// Raft.Restore on the leader (restore.go): from a file left in a new data
// directory, restored by the first leader before it serves, or from
// GOBLIN RESTORE on a running cluster.
//
// It knows nothing of RESP or gossip: the resp package calls it through
// the small interface it declares, the cluster package is behind Peers,
// and errors leave this package as the sentinel values in errors.go,
// translated into Redis wording by resp.
package node
