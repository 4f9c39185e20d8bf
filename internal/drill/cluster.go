package drill

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goblindb/goblin/internal/faults"
)

// node is one goblind of the drilled cluster.
type node struct {
	ID   string
	Addr string // the RESP address the drill's clients use
	Raft string // node-to-node address (GOBLIN NODES)

	// Local processes.
	mu    sync.Mutex
	pid   int
	cmd   *faults.Command // how to start it again after a kill
	ports []int           // node-to-node and gossip ports (what a partition cuts)

	// docker-compose.
	service string
}

func (n *node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pid
}

func (n *node) setPID(pid int) {
	n.mu.Lock()
	n.pid = pid
	n.mu.Unlock()
}

// nodeInfo is what a node says about itself and its peers.
type nodeInfo struct {
	self    map[string]string   // GOBLIN NODES entry with self=1
	nodes   []map[string]string // every entry
	role    string              // INFO replication role
	leader  string              // goblin_leader_id
	term    uint64
	applied uint64
}

// adminTimeout bounds the drill's own admin commands (INFO, GOBLIN NODES).
const adminTimeout = 2 * time.Second

// query asks the node at addr GOBLIN NODES and INFO replication.
func query(addr string, o dialOptions) (*nodeInfo, error) {
	c, err := dial(addr, o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	r, err := c.do(adminTimeout, "GOBLIN", "NODES")
	if err != nil {
		return nil, fmt.Errorf("GOBLIN NODES: %w", err)
	}
	info := &nodeInfo{}
	for _, e := range r.Array {
		m := pairs(e)
		info.nodes = append(info.nodes, m)
		if m["self"] == "1" || m["self"] == "true" {
			info.self = m
		}
	}
	if info.self == nil {
		return nil, fmt.Errorf("GOBLIN NODES on %s names no node as itself", addr)
	}
	r, err = c.do(adminTimeout, "INFO", "replication")
	if err != nil {
		return nil, fmt.Errorf("INFO replication: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(r.Str)))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		switch k {
		case "role":
			info.role = v
		case "goblin_leader_id":
			info.leader = v
		case "goblin_term":
			info.term, _ = strconv.ParseUint(v, 10, 64)
		case "goblin_applied_index":
			info.applied, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return info, nil
}

// discover builds the node list from the addresses given: each node's ID
// is what it says of itself; nodes it lists that were not given are
// added at the RESP address they gossip.
func discover(addrs []string, o dialOptions) ([]*node, error) {
	byID := map[string]*node{}
	var errs []error
	var others []map[string]string
	for _, a := range addrs {
		info, err := query(a, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", a, err))
			continue
		}
		id := info.self["id"]
		if byID[id] != nil {
			return nil, fmt.Errorf("%s and %s are the same node %s", byID[id].Addr, a, id)
		}
		byID[id] = &node{ID: id, Addr: a, Raft: info.self["raft"]}
		others = append(others, info.nodes...)
	}
	if len(byID) == 0 {
		return nil, fmt.Errorf("no node answered: %w", errors.Join(errs...))
	}
	for _, m := range others {
		if id := m["id"]; byID[id] == nil && m["addr"] != "" && m["suffrage"] != "none" {
			byID[id] = &node{ID: id, Addr: m["addr"], Raft: m["raft"]}
		}
	}
	var out []*node
	for _, n := range byID {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) < 3 {
		return nil, fmt.Errorf("the cluster has %d node(s): a drill needs 3 or more (%v)", len(out), errors.Join(errs...))
	}
	return out, nil
}

// clientPorts are the ports of a local goblind that clients use: its RESP
// port and, from its command line or environment, its TLS and pprof
// ports. Partitions never cut them.
func clientPorts(n *node) map[int]bool {
	out := map[int]bool{}
	if _, p, err := net.SplitHostPort(n.Addr); err == nil {
		port, _ := strconv.Atoi(p)
		out[port] = true
	}
	if n.cmd == nil {
		return out
	}
	get := func(flag string) string {
		for i, a := range n.cmd.Args {
			a = strings.TrimPrefix(a, "-")
			a = strings.TrimPrefix(a, "-")
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				return v
			}
			if a == flag && i+1 < len(n.cmd.Args) {
				return n.cmd.Args[i+1]
			}
		}
		env := "GOBLIN_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_")) + "="
		for _, e := range n.cmd.Env {
			if v, ok := strings.CutPrefix(e, env); ok {
				return v
			}
		}
		return ""
	}
	for _, flag := range []string{"addr", "tls-port", "pprof"} {
		v := get(flag)
		if _, p, err := net.SplitHostPort(v); err == nil {
			v = p
		}
		if port, err := strconv.Atoi(v); err == nil && port > 0 {
			out[port] = true
		}
	}
	return out
}

// adoptLocal finds a local node's process by its RESP port, reads its
// command line (to restart it after a kill) and the ports a partition
// cuts: every port it listens on but its client ports.
func adoptLocal(n *node) error {
	pid, err := faults.PIDByAddr(n.Addr)
	if err != nil {
		return err
	}
	cmd, err := faults.ReadCommand(pid)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.pid, n.cmd = pid, cmd
	n.mu.Unlock()
	return n.readPorts()
}

// readPorts reads the node process's listening ports.
func (n *node) readPorts() error {
	tcp, udp, err := faults.ListeningPorts(n.PID())
	if err != nil {
		return err
	}
	skip := clientPorts(n)
	seen := map[int]bool{}
	var ports []int
	for _, p := range append(tcp, udp...) {
		if !skip[p] && !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	sort.Ints(ports)
	if len(ports) == 0 {
		return fmt.Errorf("node %s (pid %d) listens on no port besides its client ports", n.ID, n.PID())
	}
	n.mu.Lock()
	n.ports = ports
	n.mu.Unlock()
	return nil
}

// hostOf returns the host of a node's node-to-node address when it is a
// loopback IP other than 127.0.0.1 (nodes on distinct addresses), else "".
func hostOf(n *node) string {
	h, _, err := net.SplitHostPort(n.Raft)
	if err != nil {
		return ""
	}
	ip := net.ParseIP(h)
	if ip == nil || ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.IsUnspecified() {
		return ""
	}
	return ip.String()
}

// ComposeNodes returns the RESP addresses a compose project's services
// publish on this host (127.0.0.1 for ports published on every address).
func ComposeNodes(project string) ([]string, error) {
	c := &faults.Compose{Project: project}
	if err := c.Available(); err != nil {
		return nil, err
	}
	svcs, err := c.Services()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range keys(svcs) {
		ports, err := c.PublishedPorts(name)
		if err != nil {
			return nil, err
		}
		for _, p := range ports {
			out = append(out, "127.0.0.1:"+p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("compose project %q publishes no port: give --nodes", project)
	}
	return out, nil
}
