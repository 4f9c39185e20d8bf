// Package cluster turns Goblin nodes into one replicated cluster: it finds
// the other nodes, forms the Raft group exactly once, keeps the Raft
// configuration in line with who is there, and carries a follower's
// requests to the leader.
//
// # Membership: gossip
//
// Every node runs hashicorp/memberlist and gossips its Meta: its ID (the
// Raft server ID and memberlist name), its Raft address (the plane's),
// its RESP address, the ones clients are told (CLUSTER SLOTS, ROLE; the
// TLS one too when it has a TLS port), the
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
// directly, after handing leadership, if it had it, to a voter that
// stays. When no other voter stays, the whole cluster is stopping and it
// keeps the configuration; when some seem to stay but too few to elect a
// leader without it, it first gives their departures longer to arrive
// (Leave). A leader records its own address too. Only a leader can
// change the configuration, so Raft's transport reaches a server at the
// address it gossips while gossip sees it alive (raftaddrs.go): nodes
// that all came back at new addresses still elect the leader that records
// them. Nodes back at each other's addresses are recorded by first moving
// whoever the configuration places at a taken address to a placeholder
// (vacate).
//
// # The node-to-node plane
//
// Everything nodes say to each other apart from gossip goes through one
// listener on the node's Raft address (plane.go): Raft's RPCs, through
// hashicorp/raft's network transport over the plane's StreamLayer (whose
// pooled connections a restarted peer has closed are replaced before the
// next request: raftconn.go), and the internal requests of forwarding
// (internal.go). Every connection is
// mutual TLS when the cluster has Credentials: certificates from the
// operator's CA, or derived from a shared cluster secret (secret.go: the
// secret seeds a CA's key through HKDF, so only its holders can make
// certificates peers accept, and the secret itself never travels). After
// the handshake the dialer sends a preamble naming the connection's kind,
// and for Raft the node it is for: another node at that address refuses
// it, so no node answers Raft requests meant for another (an address a
// configuration records may belong to another node by then).
// Without credentials the plane is plain TCP, which the caller allows on
// loopback only. Gossip is encrypted with memberlist's keyring. A node
// joins the Raft configuration (or a new cluster's first voters) only
// after answering its own ID over the plane (reconcile.go, verify), so a
// node that merely got into the gossip never becomes a voter. Connections
// that anyone reaching a port can hold before proving who they are (the
// plane's before their handshake, memberlist's gossip streams) are
// bounded in all and per host (connbound.go, gossipstreams.go).
//
// # Forwarding: any node accepts any command
//
// Cluster implements node.Peers over the plane: a follower sends an
// encoded raftfsm entry to the leader as GOBLIN.APPLY and gets back
// [index, reply]; the node answers with the reply, and the client's next
// read there waits until the node has applied that index, so a client
// reads its own writes. Entries travel on
// one pipelined connection per leader, in the order they are sent, because
// the leader proposes a connection's entries in the order it reads them:
// a client's pipeline through a follower is applied in its order.
// Read-index requests (GOBLIN.READINDEX, for linearizable follower reads)
// and membership changes (GOBLIN.ADMIN) use a small pool of other
// connections. Failures come back as "-CODE text" lines naming node
// sentinels, so the follower knows whether an entry was refused before it
// reached any log (sent again to the new leader) or may have been applied:
// then, as when the connection breaks after sending, the follower learns
// the entry's fate from its own log (the entry carries a proposal header
// fencing it to the leader's term; node/proposals.go). None of these
// requests exists on the client port.
//
// Followers also report their applied index to the leader every tick
// (memberlist best-effort message), which INFO replication shows as each
// follower's lag.
package cluster
