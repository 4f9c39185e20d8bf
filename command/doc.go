// Package command holds the semantics of every data command Goblin
// serves: the command table (name, flags, how it runs) of every
// command, the connection and server commands the RESP edge runs itself
// included (edge.go), argument
// parsing with Redis's exact rules and error texts, execution against a
// keyspace, and the RESP2/RESP3 reply encoding.
//
// The same code runs on both paths a command can take. A read runs on the
// node that received it, against the local keyspace, under a read lock. A
// write is validated on the node that received it (so malformed commands
// never reach the log), travels through the Raft log as its argument
// vector, and runs in every node's state machine with the time and log
// index the entry recorded, so it has the same effect everywhere. Replies
// are encoded in the protocol of the client that sent the command, which
// the log entry records too.
//
// Redis's metadata of every command (meta.go: flags, ACL categories, key
// specs), generated from Redis 7.2's command files (redismeta.go), is the
// one table COMMAND INFO reports and ACL users are checked against; each
// served command's Spec points to its entry, and takes its arity from it
// unless it states one. COMMAND DOCS reports Redis 7.2's documentation of
// its commands, texts included (redisdocs.go), see docs.go.
//
// The package knows nothing of networks or Raft: it is given a keyspace, a
// context and an argument vector, and appends a reply to a Writer.
package command
