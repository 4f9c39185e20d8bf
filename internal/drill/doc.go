// Package drill runs failover drills against a Goblin cluster: a
// workload of sorted-set commands through every node while faults are
// injected, then a verdict on what the clients saw.
//
// # The workload
//
// Clients (--clients) send one command at a time, client i to node i mod
// the number of nodes (so a node that hangs holds up only its own clients
// and the others measure what the rest of the cluster serves), at a
// shared rate (--rate): ZADD, ZINCRBY, ZSCORE and
// ZRANGE 0 -1 WITHSCORES on a few keys with a few members each, and ZADDs
// of unique members to a witness set. Keys are named drill:<run>: so a
// drill never touches other data, and are deleted at the end. Every
// operation is recorded with its call and return times and its outcome:
//
//   - ok: the node answered with a result;
//   - failed: the command was never sent (no connection), or the node
//     answered an error whose code promises it was not applied
//     (TRYAGAIN, CLUSTERDOWN, NOTLEADER, LOADING, MISCONF, OOM, ...);
//   - unknown: no answer (a timeout, a broken connection), or an error
//     whose code leaves the outcome open (ERR, or a code of its own).
//     A write with an unknown outcome may have been applied.
//
// # The verdict
//
// After the run the drill waits for the cluster to be whole, then:
//
//   - reads the witness set on every node (a linearizable read, which on
//     a follower first catches up with the leader): an acknowledged
//     member missing is a lost write, a member whose ZADD failed but is
//     present is a phantom (a reply that lied);
//   - reads every key on every node; the reads join the history and any
//     difference between replicas is reported;
//   - checks the history of each key with porcupine against a sequential
//     model of a sorted set. Failed operations are left out (they did not
//     happen), writes with an unknown outcome stay pending to the end (they
//     may take effect at any point after their call), failed or unanswered
//     reads are left out. A violation is drawn by porcupine's HTML
//     visualisation, with the faults' windows annotated;
//   - measures each fault's cost: the longest time in its window (from
//     its start to the next fault's) in which no write, or no read,
//     succeeded on any node, and the time from the fault to the first
//     successful write sent after it; per fault kind p50, p99 and max.
//
// It writes report.json, history.jsonl (every operation), timeline.svg
// (operations over time with the faults shaded, each node's role, the
// slowest operation per interval) and, on a violation,
// linearizability.html.
//
// # Faults
//
// Local processes (found from their RESP port through /proc) are killed
// with SIGKILL and started again with the command line and environment
// they had, paused with SIGSTOP, and partitioned with internal/faults'
// Network (iptables and net_cls classes: node-to-node and gossip traffic
// is cut, client traffic never). A docker-compose project's containers are
// killed and started, paused and unpaused, and partitioned by rules inside
// their network namespaces (faults.ComposeNetwork), or, where that is not
// possible, disconnected from their networks. Leader transfer and node removal use the GOBLIN admin
// commands; the leader adds a removed node that is still alive back by
// itself. A fault the deployment cannot take is skipped with the reason.
// Whatever happens (an error, an interrupt), the fault in progress is
// healed before the drill ends.
package drill
