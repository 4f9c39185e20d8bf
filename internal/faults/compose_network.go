package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
)

// ComposeNetwork cuts links between the containers of a compose project
// with iptables rules inside each container's network namespace (entered
// with nsenter from this host), by the peer containers' addresses: a
// container drops what comes from and goes to a cut peer. Clients reach
// the published ports through the Docker gateway, which no rule names,
// so they keep reaching every container. It needs root on the host that
// runs the Docker engine; NewNetwork reports ErrUnsupported otherwise.
type ComposeNetwork struct {
	c        *Compose
	mu       sync.Mutex
	services []string
	chain    string
	cut      map[Link]bool
	touched  map[string]int // service → PID of the container whose netns has our chain
	closed   bool
}

// Network prepares link cuts between the given services of the project.
func (c *Compose) Network(services ...string) (*ComposeNetwork, error) {
	if os.Geteuid() != 0 {
		return nil, unsupported("cutting links inside containers needs root (nsenter and iptables)")
	}
	for _, bin := range []string{"nsenter", "iptables"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, unsupported("%s is not installed", bin)
		}
	}
	if len(services) < 2 {
		return nil, errors.New("faults: a network needs two services or more")
	}
	n := &ComposeNetwork{c: c, services: append([]string(nil), services...), cut: map[Link]bool{}, touched: map[string]int{},
		chain: fmt.Sprintf("%s%d-%d", chainPrefix, os.Getpid(), networkSeq.Add(1))}
	// Prove that a container's namespace can be entered and changed.
	st, err := n.state()
	if err != nil {
		return nil, err
	}
	s := services[0]
	if err := n.setRules(s, st[s].pid, nil); err != nil {
		n.Close()
		return nil, unsupported("cannot change iptables rules inside container %s: %v", s, err)
	}
	return n, nil
}

// containerState is what the rules need of a running container.
type containerState struct {
	pid int
	ips []string
}

// state inspects every service's container.
func (n *ComposeNetwork) state() (map[string]containerState, error) {
	out := map[string]containerState{}
	for _, s := range n.services {
		id, err := n.c.Container(s)
		if err != nil {
			return nil, err
		}
		raw, err := n.c.docker("inspect", id)
		if err != nil {
			return nil, err
		}
		var info []struct {
			State struct {
				Pid     int
				Running bool
			}
			NetworkSettings struct {
				Networks map[string]struct{ IPAddress string }
			}
		}
		if err := json.Unmarshal([]byte(raw), &info); err != nil || len(info) != 1 {
			return nil, fmt.Errorf("faults: docker inspect %s: %v", id, err)
		}
		cs := containerState{}
		if info[0].State.Running {
			cs.pid = info[0].State.Pid
		}
		for _, nw := range info[0].NetworkSettings.Networks {
			if nw.IPAddress != "" {
				cs.ips = append(cs.ips, nw.IPAddress)
			}
		}
		sort.Strings(cs.ips)
		out[s] = cs
	}
	return out, nil
}

// nsIptables runs iptables in the network namespace of process pid.
func nsIptables(pid int, args ...string) (string, error) {
	return run("nsenter", append([]string{"-t", strconv.Itoa(pid), "-n", "iptables", "-w", "5"}, args...)...)
}

// setRules makes the chain in the container of pid drop traffic from and
// to the addresses given (none: an empty chain, still jumped to).
func (n *ComposeNetwork) setRules(service string, pid int, peers []string) error {
	if pid == 0 {
		return nil // not running: nothing to cut, and a new netns when it starts
	}
	if n.touched[service] != pid {
		nsIptables(pid, "-N", n.chain)
		for _, hook := range []string{"INPUT", "OUTPUT"} {
			if _, err := nsIptables(pid, "-C", hook, "-j", n.chain); err != nil {
				if _, err := nsIptables(pid, "-I", hook, "1", "-j", n.chain); err != nil {
					return err
				}
			}
		}
		n.touched[service] = pid
	}
	if _, err := nsIptables(pid, "-F", n.chain); err != nil {
		return err
	}
	for _, ip := range peers {
		if _, err := nsIptables(pid, "-A", n.chain, "-s", ip, "-j", "DROP"); err != nil {
			return err
		}
		if _, err := nsIptables(pid, "-A", n.chain, "-d", ip, "-j", "DROP"); err != nil {
			return err
		}
	}
	return nil
}

// Apply cuts exactly the links given and heals every other. Containers
// restarted since the last call get their rules anew.
func (n *ComposeNetwork) Apply(links ...Link) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errors.New("faults: network is closed")
	}
	known := map[string]bool{}
	for _, s := range n.services {
		known[s] = true
	}
	set := map[Link]bool{}
	for _, l := range links {
		if !known[l[0]] || !known[l[1]] || l[0] == l[1] {
			return fmt.Errorf("faults: bad link %v", l)
		}
		set[l.norm()] = true
	}
	st, err := n.state()
	if err != nil {
		return err
	}
	for _, s := range n.services {
		var peers []string
		for l := range set {
			switch s {
			case l[0]:
				peers = append(peers, st[l[1]].ips...)
			case l[1]:
				peers = append(peers, st[l[0]].ips...)
			}
		}
		sort.Strings(peers)
		if err := n.setRules(s, st[s].pid, peers); err != nil {
			return fmt.Errorf("faults: rules in %s: %w", s, err)
		}
	}
	n.cut = set
	return nil
}

// Partition, Isolate, Bridge, Cut and Heal are the shapes of Network.
func (n *ComposeNetwork) Partition(groups ...[]string) error {
	links, err := partitionLinks(n.services, groups)
	if err != nil {
		return err
	}
	return n.Apply(links...)
}

func (n *ComposeNetwork) Isolate(service string) error { return n.Partition([]string{service}) }

func (n *ComposeNetwork) Bridge(bridge string) error {
	links, err := bridgeLinks(n.services, bridge)
	if err != nil {
		return err
	}
	return n.Apply(links...)
}

func (n *ComposeNetwork) Heal() error { return n.Apply() }

// Cuts returns the links currently cut.
func (n *ComposeNetwork) Cuts() []Link {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Link
	for l := range n.cut {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+" "+out[i][1] < out[j][0]+" "+out[j][1] })
	return out
}

// Close removes the chain from every container it was added to that
// still runs in the same namespace. It is safe to call more than once.
func (n *ComposeNetwork) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	st, err := n.state()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for s, pid := range n.touched {
		if st[s].pid != pid {
			continue // restarted or gone: its namespace went with it
		}
		for _, hook := range []string{"INPUT", "OUTPUT"} {
			nsIptables(pid, "-D", hook, "-j", n.chain)
		}
		nsIptables(pid, "-F", n.chain)
		if _, err := nsIptables(pid, "-X", n.chain); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
