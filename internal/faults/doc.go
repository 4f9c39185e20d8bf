// Package faults injects the faults a failover drill needs into goblind
// processes on one machine, or into the services of a docker-compose
// project: network partitions between nodes, kill -9, SIGSTOP/SIGCONT,
// and restarts with a process's original command line. The e2e tests and
// `goblin drill` share it.
//
// # Partitions on one machine
//
// Local nodes all talk over the loopback interface, usually on 127.0.0.1
// with different ports (RESP on p, the node-to-node plane on p+10000,
// gossip on p+20000, TCP and UDP). A port names the receiver of a packet
// but not its sender: a node dials its peers from ephemeral ports, so a
// rule "drop what goes to B's node port" would cut B from everyone, not
// from A alone. The sender is identified instead by the net_cls cgroup
// controller: every process of a Network is moved into a net_cls cgroup
// of its own with a class ID, the kernel tags each socket of the process
// with that class (sockets the process already holds too, when it is
// moved), and iptables' cgroup match reads the tag of the socket a packet
// leaves from. Cutting the link A–B then adds, for both directions,
//
//	-m cgroup --cgroup <class of A> -p tcp [-d <B's host>] -m multiport --dports <B's ports> -j DROP
//
// and the same for UDP, in a chain of the Network's own (GOBLIN-DRILL-<pid>
// of the process that created it, then a sequence number), jumped to from
// OUTPUT for traffic leaving on lo. Packets sent to the nodes' client
// ports are never matched, nor is anything sent from a process outside
// the Network: clients keep reaching every node while the nodes cannot
// reach each other. Nodes on distinct 127.0.0.x addresses are told apart
// by the destination address of their ports (Node.Host).
//
// A Network removes its chain and its cgroups on Close, after moving its
// processes back to the root net_cls cgroup; callers defer Close (tests
// register it with t.Cleanup, the drill calls it on interrupt too). A
// chain or cgroup left behind by a process that died without closing is
// removed by the next NewNetwork. The net_cls hierarchy itself is mounted
// when no mount exists and then left mounted: other users may share it.
//
// Where iptables, its cgroup match or the right to mount cgroups and
// change firewall rules is missing, NewNetwork returns an error wrapping
// ErrUnsupported; tests turn it into a t.Skip with the reason.
//
// # Processes
//
// Kill, Pause and Resume signal a PID; PIDByPort finds the process
// listening on a TCP port through /proc/net/tcp{,6} (the socket's inode)
// and /proc/*/fd, so a drill can act on nodes it did not start.
// ReadCommand captures a process's argv, environment and working
// directory before it is killed, and Command.Start runs it again, in a
// session of its own so it outlives the drill.
//
// # docker-compose
//
// Compose acts on the containers of one compose project through the
// docker CLI: kill and start, pause and unpause, and disconnecting a
// container from its networks (its published client ports are cut too:
// the container has no network left) and reconnecting it with its
// aliases and address. ComposeNetwork cuts links between containers
// instead, keeping their client ports: iptables rules by peer address in
// a chain of its own inside each container's network namespace, entered
// with nsenter from the host (the image needs no tools); clients arrive
// through the Docker gateway, which no rule names.
package faults
