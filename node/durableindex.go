package node

// What this node's log holds durably, for WAITAOF.
//
// Redis's WAITAOF counts the servers whose append-only file has a
// connection's writes on stable storage. Goblin's is the Raft log. Under
// --fsync always an entry is applied only once this node's copy is
// durable (a follower's append and a single node's end with an fdatasync;
// a cluster leader applies only what its own deferred sync covered,
// leadersync.go), so the applied index is durable. Under everysec an
// entry is durable once a sync that began after its append ends: the
// once-a-second sync records the applied index it covers (logstore.go).
// Both count applied entries only: they are committed, so no later
// leader cuts them from the log, and an index stays durable once it is.

// DurableIndex returns the highest index up to which every entry this
// node has applied is on stable storage in its own log.
func (n *Node) DurableIndex() uint64 {
	applied := n.fsm.Applied()
	if n.cfg.Fsync == FsyncAlways {
		return applied
	}
	return min(applied, n.stores.syncedApplied.Load())
}

// SyncsAlways reports whether this node runs --fsync always: every entry
// it holds in its log is durable there.
func (n *Node) SyncsAlways() bool { return n.cfg.Fsync == FsyncAlways }
