package faults

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Node is one process of a Network as the network sees it.
type Node struct {
	Name string // a label: the node ID
	PID  int    // the process
	// Host is the address Ports listen on, for nodes on distinct
	// 127.0.0.x addresses; "" matches any destination address.
	Host string
	// Ports are the node-to-node and gossip ports, cut for TCP and UDP.
	// Never list a client (RESP) port: clients must keep reaching it.
	Ports []int
}

// Link is the connection between two nodes, by name.
type Link [2]string

func (l Link) norm() Link {
	if l[1] < l[0] {
		return Link{l[1], l[0]}
	}
	return l
}

// Network cuts links between local processes; see the package doc.
// Its methods are safe for concurrent use.
type Network struct {
	mu      sync.Mutex
	nodes   map[string]*netNode
	order   []string
	chains  []*chain
	cut     map[Link]bool
	closed  bool
	nameTag string
}

type netNode struct {
	Node
	class *class
}

var networkSeq atomic.Uint32

// NewNetwork prepares partitions between nodes: a chain of its own, and
// a net_cls class per node with the node's process moved into it. It
// cuts nothing yet. The caller must Close it. An error wrapping
// ErrUnsupported means this machine does not allow it.
func NewNetwork(nodes ...Node) (*Network, error) {
	if os.Geteuid() != 0 {
		return nil, unsupported("partitions need root (iptables and cgroups)")
	}
	if len(nodes) < 2 {
		return nil, errors.New("faults: a network needs two nodes or more")
	}
	sweepChains("iptables")
	sweepChains("ip6tables")
	sweepClasses()
	seq := networkSeq.Add(1)
	pid := os.Getpid()
	n := &Network{nodes: map[string]*netNode{}, cut: map[Link]bool{}, nameTag: fmt.Sprintf("%d-%d", pid, seq)}
	six := false
	for i, nd := range nodes {
		if nd.Name == "" || n.nodes[nd.Name] != nil {
			n.Close()
			return nil, fmt.Errorf("faults: node names must be unique and non-empty (%q)", nd.Name)
		}
		if len(nd.Ports) == 0 {
			n.Close()
			return nil, fmt.Errorf("faults: node %s has no ports to cut", nd.Name)
		}
		if ip := net.ParseIP(nd.Host); nd.Host != "" && ip == nil {
			n.Close()
			return nil, fmt.Errorf("faults: node %s: host %q is not an IP address", nd.Name, nd.Host)
		} else if ip != nil && ip.To4() == nil {
			six = true
		}
		// Class IDs: the PID picks a major number, the node its minor, so
		// two processes' networks do not share a class.
		id := uint32(pid%0x7fff+1)<<16 | (seq%0x100)<<8 | uint32(i+1)
		c, err := newClass(fmt.Sprintf("%s%s-%s", groupPrefix, n.nameTag, sanitize(nd.Name)), id)
		if err != nil {
			n.Close()
			return nil, err
		}
		nn := &netNode{Node: nd, class: c}
		n.nodes[nd.Name] = nn
		n.order = append(n.order, nd.Name)
		if nd.PID > 0 {
			if err := c.add(nd.PID); err != nil {
				n.Close()
				return nil, err
			}
		}
	}
	bins := []string{"iptables"}
	if six {
		bins = append(bins, "ip6tables")
	}
	for _, bin := range bins {
		c, err := newChain(bin, chainPrefix+n.nameTag)
		if err != nil {
			n.Close()
			return nil, err
		}
		n.chains = append(n.chains, c)
	}
	// The cgroup match must exist: try a rule that matches nothing.
	if err := n.chains[0].set([][]string{{"-m", "cgroup", "--cgroup", "1", "-p", "tcp", "--dport", "1", "-j", "DROP"}}); err != nil {
		n.Close()
		return nil, unsupported("iptables has no cgroup match: %v", err)
	}
	if err := n.chains[0].set(nil); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// sanitize keeps a node name usable in a cgroup directory name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '.' && s == ".." {
			return '_'
		}
		return r
	}, s)
}

// Names returns the nodes' names in the order NewNetwork was given them.
func (n *Network) Names() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.order...)
}

// SetPID moves a restarted node's new process into the node's class.
func (n *Network) SetPID(name string, pid int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	nn := n.nodes[name]
	if nn == nil {
		return fmt.Errorf("faults: no node %q", name)
	}
	if err := nn.class.add(pid); err != nil {
		return err
	}
	nn.PID = pid
	return nil
}

// SetPorts replaces a node's ports (a restarted node may listen on others).
func (n *Network) SetPorts(name string, ports []int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	nn := n.nodes[name]
	if nn == nil {
		return fmt.Errorf("faults: no node %q", name)
	}
	nn.Ports = append([]int(nil), ports...)
	return n.applyLocked(n.cut)
}

// Cuts returns the links currently cut, sorted.
func (n *Network) Cuts() []Link {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Link
	for l := range n.cut {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

// Apply cuts exactly the links given (both directions of each) and heals
// every other.
func (n *Network) Apply(links ...Link) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	set := map[Link]bool{}
	for _, l := range links {
		if n.nodes[l[0]] == nil || n.nodes[l[1]] == nil || l[0] == l[1] {
			return fmt.Errorf("faults: bad link %v", l)
		}
		set[l.norm()] = true
	}
	return n.applyLocked(set)
}

// Cut cuts the link a–b, keeping the links already cut.
func (n *Network) Cut(a, b string) error {
	links := append(n.Cuts(), Link{a, b})
	return n.Apply(links...)
}

// Heal restores every link.
func (n *Network) Heal() error { return n.Apply() }

// Isolate cuts name from every other node.
func (n *Network) Isolate(name string) error {
	return n.Partition([]string{name})
}

// Partition splits the nodes into groups: nodes of different groups
// cannot reach each other. Nodes named in no group form one more group.
func (n *Network) Partition(groups ...[]string) error {
	links, err := partitionLinks(n.Names(), groups)
	if err != nil {
		return err
	}
	return n.Apply(links...)
}

// Bridge splits the other nodes into two halves that reach each other
// only through bridge: with three nodes, the link between the other two
// is cut.
func (n *Network) Bridge(bridge string) error {
	links, err := bridgeLinks(n.Names(), bridge)
	if err != nil {
		return err
	}
	return n.Apply(links...)
}

// partitionLinks returns the links between nodes of different groups.
func partitionLinks(names []string, groups [][]string) ([]Link, error) {
	group := map[string]int{}
	for i, g := range groups {
		for _, name := range g {
			if _, dup := group[name]; dup {
				return nil, fmt.Errorf("faults: %s is in two groups", name)
			}
			group[name] = i + 1
		}
	}
	var links []Link
	for i, a := range names {
		for _, b := range names[i+1:] {
			if group[a] != group[b] {
				links = append(links, Link{a, b})
			}
		}
	}
	return links, nil
}

// bridgeLinks returns the links that leave two halves of the nodes other
// than bridge connected only through it.
func bridgeLinks(names []string, bridge string) ([]Link, error) {
	var others []string
	for _, name := range names {
		if name != bridge {
			others = append(others, name)
		}
	}
	if len(others) < 2 || len(others) == len(names) {
		return nil, fmt.Errorf("faults: bridge %q: need a node of the network and two others", bridge)
	}
	half := len(others) / 2
	var links []Link
	for _, a := range others[:half] {
		for _, b := range others[half:] {
			links = append(links, Link{a, b})
		}
	}
	return links, nil
}

// applyLocked writes the rules for the links in set.
func (n *Network) applyLocked(set map[Link]bool) error {
	if n.closed {
		return errors.New("faults: network is closed")
	}
	var links []Link
	for l := range set {
		links = append(links, l)
	}
	sort.Slice(links, func(i, j int) bool { return links[i][0]+"\x00"+links[i][1] < links[j][0]+"\x00"+links[j][1] })
	for _, c := range n.chains {
		var rules [][]string
		for _, l := range links {
			a, b := n.nodes[l[0]], n.nodes[l[1]]
			rules = append(rules, dropRules(c.bin, a, b)...)
			rules = append(rules, dropRules(c.bin, b, a)...)
		}
		if err := c.set(rules); err != nil {
			return err
		}
	}
	n.cut = set
	return nil
}

// dropRules are the rules that drop what from's process sends to to's
// ports, TCP and UDP.
func dropRules(bin string, from, to *netNode) [][]string {
	ip := net.ParseIP(to.Host)
	if ip != nil && (ip.To4() == nil) != (bin == "ip6tables") {
		return nil
	}
	ports := make([]string, len(to.Ports))
	for i, p := range to.Ports {
		ports[i] = strconv.Itoa(p)
	}
	var out [][]string
	for _, proto := range []string{"tcp", "udp"} {
		// multiport takes up to 15 ports per rule.
		for i := 0; i < len(ports); i += 15 {
			j := min(i+15, len(ports))
			r := []string{"-m", "cgroup", "--cgroup", strconv.FormatUint(uint64(from.class.id), 10), "-p", proto}
			if to.Host != "" {
				r = append(r, "-d", to.Host)
			}
			r = append(r, "-m", "multiport", "--dports", strings.Join(ports[i:j], ","), "-j", "DROP")
			out = append(out, r)
		}
	}
	return out
}

// Close heals every link, removes the chain and the classes (the
// processes go back to the root net_cls cgroup). It is safe to call more
// than once.
func (n *Network) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	var errs []error
	for _, c := range n.chains {
		if err := c.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, nn := range n.nodes {
		if err := nn.class.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
