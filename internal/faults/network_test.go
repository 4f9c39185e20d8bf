package faults

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// newTestNetwork starts fake nodes on hosts and a Network over them,
// skipping the test where partitions are unsupported.
func newTestNetwork(t *testing.T, hosts ...string) (*Network, []*fakeNode) {
	t.Helper()
	var fakes []*fakeNode
	var nodes []Node
	for i, h := range hosts {
		f := startFake(t, string(rune('a'+i)), h)
		fakes = append(fakes, f)
		host := ""
		if h != "127.0.0.1" {
			host = h
		}
		nodes = append(nodes, Node{Name: f.name, PID: f.pid(), Host: host, Ports: []int{f.node}})
	}
	n, err := NewNetwork(nodes...)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("partitions are not possible here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return n, fakes
}

// A partition blocks the node ports in both directions, TCP and UDP,
// including a connection opened before it, and leaves the client ports
// and the other links alone; healing restores everything.
func TestIsolate(t *testing.T) {
	n, f := newTestNetwork(t, "127.0.0.1", "127.0.0.1", "127.0.0.1")
	a, b, c := f[0], f[1], f[2]
	a.reach("tcp", b, b.node)
	a.reach("udp", b, b.node)
	if err := a.do("hold", b.addr(b.node)); err != nil {
		t.Fatal(err)
	}
	a.reach("held", b, 0)

	if err := n.Isolate("a"); err != nil {
		t.Fatal(err)
	}
	if got := n.Cuts(); len(got) != 2 {
		t.Fatalf("cuts %v, want a-b and a-c", got)
	}
	a.blocked("tcp", b, b.node)
	a.blocked("udp", b, b.node)
	a.blocked("held", b, 0)
	b.blocked("tcp", a, a.node)
	c.blocked("udp", a, a.node)
	a.blocked("tcp", c, c.node)
	// The majority still talks; clients reach everyone.
	b.reach("tcp", c, c.node)
	c.reach("udp", b, b.node)
	a.reach("tcp", b, b.client)
	b.reach("tcp", a, a.client)

	if err := n.Heal(); err != nil {
		t.Fatal(err)
	}
	a.reach("tcp", b, b.node)
	b.reach("udp", a, a.node)
	c.reach("tcp", a, a.node)
}

// Cutting one link leaves the two others; Bridge on three nodes is the
// same shape around the bridge.
func TestCutAndBridge(t *testing.T) {
	n, f := newTestNetwork(t, "127.0.0.1", "127.0.0.1", "127.0.0.1")
	a, b, c := f[0], f[1], f[2]
	if err := n.Cut("a", "b"); err != nil {
		t.Fatal(err)
	}
	a.blocked("tcp", b, b.node)
	b.blocked("tcp", a, a.node)
	a.reach("tcp", c, c.node)
	c.reach("tcp", b, b.node)

	if err := n.Bridge("a"); err != nil {
		t.Fatal(err)
	}
	if got := n.Cuts(); len(got) != 1 || got[0] != (Link{"b", "c"}) {
		t.Fatalf("bridge a: cuts %v, want [b c]", got)
	}
	a.reach("tcp", b, b.node)
	b.blocked("udp", c, c.node)
	c.blocked("tcp", b, b.node)

	if err := n.Partition([]string{"a", "c"}); err != nil {
		t.Fatal(err)
	}
	a.reach("tcp", c, c.node)
	b.blocked("tcp", a, a.node)
	b.blocked("tcp", c, c.node)
}

// Nodes on distinct loopback addresses with the same port numbers are
// cut by address.
func TestDistinctAddresses(t *testing.T) {
	n, f := newTestNetwork(t, "127.0.0.2", "127.0.0.3", "127.0.0.4")
	a, b, c := f[0], f[1], f[2]
	if err := n.Isolate("b"); err != nil {
		t.Fatal(err)
	}
	a.blocked("tcp", b, b.node)
	b.blocked("tcp", c, c.node)
	a.reach("tcp", c, c.node)
	a.reach("tcp", b, b.client)
}

// Close removes the chain and the cgroups and moves the processes back.
func TestCloseRemovesEverything(t *testing.T) {
	n, f := newTestNetwork(t, "127.0.0.1", "127.0.0.1")
	if err := n.Isolate("a"); err != nil {
		t.Fatal(err)
	}
	f[0].blocked("tcp", f[1], f[1].node)
	chainName := n.chains[0].name
	dirs := []string{n.nodes["a"].class.dir, n.nodes["b"].class.dir}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := iptables("iptables", "-S")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, chainName) {
		t.Fatalf("chain %s left after Close:\n%s", chainName, out)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("cgroup %s left after Close: %v", d, err)
		}
	}
	cg, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(f[0].pid()), "cgroup"))
	if strings.Contains(string(cg), groupPrefix) {
		t.Fatalf("process still in a drill cgroup: %s", cg)
	}
	f[0].reach("tcp", f[1], f[1].node)
	if err := n.Heal(); err == nil {
		t.Fatal("Heal on a closed network succeeded")
	}
}

// A chain and cgroup left by a process that died are swept by the next
// NewNetwork.
func TestSweepStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	// A PID that is certainly dead: a finished child's.
	dead := startFake(t, "x", "127.0.0.1")
	deadPID := dead.pid()
	dead.cmd.Process.Kill()
	dead.cmd.Wait()
	name := chainPrefix + strconv.Itoa(deadPID) + "-1"
	c, err := newChain("iptables", name)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = c
	cls, err := newClass(groupPrefix+strconv.Itoa(deadPID)+"-1-a", 0x7fff0001)
	if err != nil {
		removeChain("iptables", name)
		t.Skip(err)
	}
	newTestNetwork(t, "127.0.0.1", "127.0.0.1")
	out, _ := iptables("iptables", "-S")
	if strings.Contains(out, name) {
		removeChain("iptables", name)
		t.Fatalf("stale chain %s not swept", name)
	}
	if _, err := os.Stat(cls.dir); !os.IsNotExist(err) {
		os.Remove(cls.dir)
		t.Fatalf("stale cgroup %s not swept", cls.dir)
	}
}

func TestBadShapes(t *testing.T) {
	n, _ := newTestNetwork(t, "127.0.0.1", "127.0.0.1")
	if err := n.Cut("a", "zz"); err == nil {
		t.Fatal("cut to an unknown node succeeded")
	}
	if err := n.Bridge("a"); err == nil {
		t.Fatal("bridge with one other node succeeded")
	}
	if err := n.Partition([]string{"a"}, []string{"a"}); err == nil {
		t.Fatal("a node in two groups was accepted")
	}
}
