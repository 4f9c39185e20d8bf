// Package raftfsm is Goblin's replicated state machine: the binary format
// of log entries, the Applier that executes them against a keyspace and
// the ACL users (aclstate.go), and the hashicorp/raft FSM (batched apply,
// snapshot, restore) around it.
//
// An entry is [version u8][op u8][payload]. Every entry that can touch
// time-dependent state carries the leader's clock, and every command
// carries the protocol its reply is encoded in, so applying the same log
// gives the same keyspace and the same replies on every node. The Applier
// is usable without Raft (to replay a log, or in tests); FSM is the thin
// adapter raft calls. An entry that cannot be decoded means the log is
// corrupt: the FSM panics rather than diverge from its peers.
package raftfsm
