// Package resp is Goblin's network edge: it accepts RESP connections
// (tidwall/redcon) on TCP, TLS (tls.go) and Unix sockets, keeps each
// connection's state (database, protocol, name, transaction, watched keys,
// READONLY), answers the connection and server commands (HELLO, AUTH,
// CLIENT, SELECT, MULTI, INFO, COMMAND, CONFIG, ...), and hands data
// commands to the backend: writes as log entries, reads after a
// consistency check. Node errors are translated into Redis's wording here
// and nowhere else. Every command is specified once, in the command
// table (command.Spec, with Edge set for those answered here); the edge
// holds only the handlers of its own (edgeHandlers, conncmds.go).
//
// Observation (slowlog.go, latency.go, monitor.go): each command's time
// goes to the slow log and the latency monitor when it passes their
// thresholds, and each command to the MONITOR connections; with nobody
// monitoring that costs one atomic load. CLIENT PAUSE (pause.go) holds
// commands before they run, at the cost of one atomic load otherwise.
//
// Connections (server.go, accept.go): redcon accepts them on each
// listener, through a plain adapter that wraps each socket, and calls
// back to admit it against maxclients and make its client. The TLS
// handshake runs in the connection's own goroutine, bounded, on its
// first read. Every request is parsed by the connection's wire.Framer,
// with Redis's rules, limits and "Protocol error" texts: redcon reads
// the first request's bytes as received (or an empty stand-in where it
// would parse them otherwise than Redis), and the server runs the
// Framer's parse of it, then detaches the connection from redcon and
// serves it from the Framer's batches (connloop.go): a plaintext one from
// inside its syscall.RawConn Read, so that a request costs one read
// system call, as in Redis, not two; a batch with a blocking pop or WAIT
// runs outside it. With --event-loop, on Linux, a plaintext connection is
// served by the event loop instead (evloop_linux.go), while its goroutine
// waits: the loop runs the batches that run without waiting on this node
// (loopable.go), has the goroutine wait for the writes it proposed for the
// connection, and lends the others to the goroutine, which keeps the
// connection once it may wait for data (a blocking pop, WAIT) or is no
// longer plain (MULTI, MONITOR). Close stops admitting
// connections, waits for the batches in flight to answer, then closes
// redcon's servers, which close the listeners and the connections.
//
// Pipelining: the Framer hands over every request already received on a
// connection at once, as slices of its buffer. Writes in such a batch
// are proposed to Raft without waiting for one another, so one round of
// log replication serves them all; a read waits for the writes before it,
// and on a follower until they are applied there too (client.ownWrites: a
// connection reads its own writes), and all replies go out in order, in
// one write.
//
// ACL users (acl.go, aclclient.go, aclcmd.go): every command is checked
// against the connection's user before it runs, after Redis's checks of
// existence, arity and authentication: one branch for a user with every
// permission, a bitmap test otherwise, and key patterns only when the
// user's keys are restricted. The users are the replicated ones (the
// state machine's copy), changed through OpACL entries; the connection
// resolves its user again when they change, and closes when its user is
// deleted.
//
// Limits, with Redis's names and errors: maxclients counts every
// connection from its accept and keeps the process's descriptors for
// the node's own files and peers (maxclients.go); client-query-buffer-
// limit bounds what the framer buffers of a client's incomplete requests
// (querybuf.go); client-output-buffer-limit closes a client whose waiting
// replies pass it, and stops a reply that grows element by element at it
// (outbuf.go); without a hard limit for normal clients, the reply budget
// stands in for one, shared by all clients, from the memory the node has
// to spare (replybudget.go). maxmemory is the backend's (MemoryBackend): its leader
// refuses the writes, and the edge only refuses what a transaction would
// queue here while this node is over its own limit.
//
// Statistics (cmdstats.go, opsmeter.go, totals.go): each command's calls,
// refusals, failures (an error reply, told apart in a batch of writes'
// replies), time and latency histogram, counted through the cmdStat
// pointer the connection keeps with the command it last looked up, and
// error replies by code; INFO (info.go) and the metrics package read
// them. A command is timed with one monotonic clock read: it starts
// where the previous one on its connection ended, and a write ends when
// its entry is applied (on a follower: when the leader answers).
//
// Blocking pops (blocking.go): a BZPOPMIN that finds nothing waits here,
// in a first-come first-served registry the state machine's Ready hook
// feeds, and proposes its command again when a key it waits on gets
// members: the pop it receives is decided by one log entry. WAIT (wait.go)
// blocks in the same registry (for CLIENT UNBLOCK and CLIENT LIST's b)
// until the node knows enough other nodes hold the connection's last write
// (ReplicaBackend); the blocked WAITs are counted together.
//
// A connection's goroutine alone changes its state; what CLIENT LIST shows
// of other connections, it reads under their infoMu (client.go).
package resp
