// Package node runs one Goblin node: the Raft instance (hashicorp/raft),
// its log and stable stores (raft-boltdb/v2 files behind one seam,
// logstore.go), the snapshot store, and the state machine from raftfsm.
// It owns the write path (encode, propose, wait until applied here), the
// read path (the consistency check that makes a local read linearizable),
// leadership bookkeeping (a barrier entry at the start of every term before
// reads are served), and the leader's duty of turning expired keys into
// log entries.
//
// It knows nothing of RESP: the resp package calls it through the small
// interface it declares, and errors leave this package as the sentinel
// values below, translated into Redis wording by resp.
package node
