// Package keyspace holds Goblin's databases: the sixteen numbered DBs, the
// keys in each, their values (sorted sets from package packed), expiry
// times, and the per-key modification index WATCH relies on.
//
// The keyspace is the state the Raft state machine replicates, so every
// mutation takes its notion of "now" and its log index from the caller,
// never from the clock: applying the same log gives the same keyspace on
// every node. Reads pass the local clock and treat a key whose time has
// come as absent without deleting it; writes (on the apply path) delete it
// first. The leader turns expired keys into log entries, so deletions are
// replicated like any other write.
//
// The package knows nothing of RESP, Raft or networking. It is not safe for
// concurrent use by itself; Keyspace embeds a sync.RWMutex that callers hold
// (the state machine for writes, readers for reads).
package keyspace
