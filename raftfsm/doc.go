// Package raftfsm is Goblin's replicated state machine: the binary format
// of log entries, the Applier that executes them against a keyspace and
// the ACL users (aclstate.go), and the hashicorp/raft FSM (batched apply,
// snapshot, restore) around it.
//
// An entry is [version u8][op u8][payload]; an entry a node proposes for a
// client carries a proposal header after the op (proposal.go): the log
// term it may take effect in, outside which every node refuses it alike,
// and an ID by which the FSM reports its result, so that its proposer can
// tell whether it was applied when leadership changed while it was in
// flight. A group (group.go) is several such entries in one log entry:
// the leader's group commit writes a batch so, and each of its entries is
// applied as a log entry of its own would be. A chunk (chunk.go) is the
// other way round: a piece of a data entry too large for one log entry
// in a cluster; the whole entry is applied with its last piece. Every entry that can touch
// time-dependent state carries the leader's clock, and every command
// carries the protocol its reply is encoded in, so applying the same log
// gives the same keyspace and the same replies on every node. The Applier
// is usable without Raft (to replay a log, or in tests); FSM is the thin
// adapter raft calls.
//
// A snapshot (and a backup's or a digest's Capture) takes a view of the
// keyspace (keyspace.View) under its write lock, on raft's FSM goroutine
// for a snapshot: the view copies no member (the sets share their leaves
// with it, copy on write), so applies wait a few milliseconds for ten
// million members in few keys, and about 2 µs per key for many keys
// (docs/operations.md, "Snapshots at scale"). Persist then encodes the
// view on raft's snapshot goroutine, streaming, while applies go on.
//
// No entry can stop a node. A leader checks what it is asked to propose
// (Validate) before it enters the log. An entry that reaches the log
// anyway and cannot be decoded is recorded as failed on every node alike:
// it changes nothing, its proposer gets an error, a counter and an ERROR
// log line record it, and applying goes on; a panic there would make one
// bad entry an outage that every restart replays. An entry that decodes
// runs command by command, and a command the Applier cannot run (unknown,
// wrong arity, bad arguments) gets the error reply Redis would give it,
// as values: nothing is half-applied. Every node builds an entry's
// replies in memory, so they are bounded: once they pass
// command.MaxAppliedReply, the entry's remaining reads answer an error
// instead of running (its writes still run), and a ZRANDMEMBER with
// repetition that would pass it alone answers an error.
package raftfsm
