// Package cluster turns Goblin nodes into one replicated cluster: it finds
// the other nodes, forms the Raft group exactly once, keeps the Raft
// configuration in line with who is there, and carries a follower's
// requests to the leader.
//
// # Membership: gossip
//
// Every node runs hashicorp/memberlist and gossips its Meta: its ID (the
// Raft server ID and memberlist name), its Raft address, the RESP address
// peers forward to, the one clients are told (CLUSTER SLOTS, ROLE), the
// --bootstrap-expect it was started with, whether it has Raft state, and
// its role. Seeds (--join) only need to reach one live node; a node may
// list itself, and seeds that do not answer yet are tried again with
// backoff until another node is found. memberlist detects failures; a
// node leaving gracefully first sets Leaving in its metadata, then leaves
// the gossip, so the others can tell "left" from "dead".
//
// # Forming a cluster: exactly one bootstrap
//
// A node with --bootstrap-expect N and no Raft state waits until it sees N
// alive nodes, none of which has Raft state and all of which expect N.
// The new cluster is the N lowest IDs; only its lowest member bootstraps
// it, with all N as voters (Raft's other nodes start with an empty
// configuration and accept the bootstrapper's votes and entries). With
// exactly N nodes, a node can only see N nodes once it sees them all, so
// exactly one node, the lowest, ever tries.
//
// Gossip is eventually consistent, so with more than N nodes starting at
// once two nodes may each believe they are lowest in different sets. Claims
// close that gap: before bootstrapping, the claimer asks every member of
// its set, over memberlist's reliable channel, to promise to be part of
// its cluster. A node promises only when it has no Raft state and has not
// promised another claimer that is still alive (a claimer that is
// bootstrapping holds its own promise). Two sets that overlap cannot both
// collect every promise; the loser releases its promises and retries
// after a random backoff, by which time the winner's State is gossiped and
// nobody retries. Promises need no timeouts: they end with a release, with
// the claimer's death in gossip, or with the promiser gaining Raft state.
// The bootstrapper's own "no state" check and the write of the first
// configuration are one step on Raft's goroutine (raft.BootstrapCluster on
// a live node), so a vote arriving meanwhile cannot slip between them.
//
// Restarts never bootstrap: a node with state (a term, a log entry or a
// snapshot) skips the whole procedure, and one whose data was lost sees
// that the others have state and waits to be added by the leader. What
// remains possible is what any bootstrap-expect scheme allows: 2N or more
// nodes with --bootstrap-expect N whose gossip pools never meet form two
// clusters.
//
// # Keeping the configuration in line: the leader reconciles
//
// Every tick the leader compares the Raft configuration with gossip: it
// adds alive nodes missing from it (voters up to MaxVoters, non-voters
// beyond), re-adds a node whose Raft address changed, promotes non-voters
// when there is room, removes nodes that left gracefully, and, with
// ReapDeadAfter set, nodes dead that long. GOBLIN REMOVE removes a dead
// node at once. A leaving node also asks the leader to remove it
// directly, after handing over leadership if it had it.
//
// # Forwarding: any node accepts any command
//
// Cluster implements node.Peers over RESP: a follower sends an encoded
// raftfsm entry to the leader as GOBLIN.APPLY and gets back [index,
// reply]; the node then waits until it has applied that index before
// answering, so a client reads its own writes. Entries travel on one
// pipelined connection per leader, in the order they are sent, because
// the leader executes a connection's requests in order: a client's
// pipeline through a follower is applied in its order. Read-index requests
// (GOBLIN.READINDEX, for linearizable follower reads) and membership
// changes (GOBLIN.ADMIN) use a small pool of other connections. Failures
// come back as "-CODE text" lines naming node sentinels, so the follower
// knows whether an entry was refused before it reached any log (sent again
// to the new leader) or may have been applied (reported as uncertain).
//
// Followers also report their applied index to the leader every tick
// (memberlist best-effort message), which INFO replication shows as each
// follower's lag.
package cluster
