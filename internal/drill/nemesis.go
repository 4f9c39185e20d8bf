package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goblindb/goblin/internal/faults"
)

// The faults a drill can inject.
const (
	FaultKill              = "kill"               // kill -9 the target, restart it when the fault ends
	FaultPause             = "pause"              // SIGSTOP the target, SIGCONT when the fault ends
	FaultPartitionLeader   = "partition-leader"   // cut the leader from every other node
	FaultPartitionMinority = "partition-minority" // cut a minority of random nodes from the majority
	FaultBridge            = "bridge"             // two halves that reach each other only through one node
	FaultTransfer          = "transfer"           // GOBLIN TRANSFER: hand leadership to another voter
	FaultRemoveRejoin      = "remove-rejoin"      // GOBLIN REMOVE a follower; the leader adds it back
	FaultDiskFull          = "disk-full"          // fill the target's data filesystem
	FaultSlowDisk          = "slow-disk"          // delay the target's disk writes
)

// AllFaults lists every fault kind, in the order the docs describe them.
var AllFaults = []string{FaultKill, FaultPause, FaultPartitionLeader, FaultPartitionMinority, FaultBridge,
	FaultTransfer, FaultRemoveRejoin, FaultDiskFull, FaultSlowDisk}

// skipError says why a fault cannot be injected into this cluster.
type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

func skip(format string, args ...any) error { return skipError{fmt.Sprintf(format, args...)} }

// backend injects faults into one kind of deployment.
type backend interface {
	// supports returns nil or a skipError for a fault kind.
	supports(kind string) error
	kill(ctx context.Context, n *node) error
	restart(ctx context.Context, n *node) error
	pause(n *node) error
	resume(n *node) error
	// partition cuts the links between the groups (nodes in no group
	// keep every link); heal restores them.
	partition(groups [][]*node) error
	bridge(bridge *node) error
	heal() error
	close() error
}

// Fault is one injected fault, as the report shows it. Times are
// milliseconds since the start of the run.
type Fault struct {
	N       int      `json:"n"`
	Kind    string   `json:"kind"`
	Targets []string `json:"targets,omitempty"`
	Leader  string   `json:"leader_before,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	StartMS float64  `json:"start_ms"`
	HealMS  float64  `json:"heal_ms"`
	EndMS   float64  `json:"end_ms"` // the end of its window: the next fault, or the end of the run
	Error   string   `json:"error,omitempty"`
	// Measured by the analysis.
	Avail *Availability `json:"availability,omitempty"`

	start, heal, end int64 // nanoseconds
}

// pickTarget returns the node a kill or pause hits: the leader, a
// follower, or any node, as --target says.
func (d *Drill) pickTarget(leader string) *node {
	var followers []*node
	for _, n := range d.nodes {
		if n.ID != leader {
			followers = append(followers, n)
		}
	}
	switch d.cfg.Target {
	case "follower":
		return followers[d.rng.IntN(len(followers))]
	case "random":
		return d.nodes[d.rng.IntN(len(d.nodes))]
	}
	if n := d.nodeByID(leader); n != nil {
		return n
	}
	return d.nodes[d.rng.IntN(len(d.nodes))]
}

func (d *Drill) nodeByID(id string) *node {
	for _, n := range d.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

func ids(ns []*node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

// inject starts fault f and returns the function that ends it.
func (d *Drill) inject(ctx context.Context, f *Fault) (heal func(context.Context) error, err error) {
	leader := f.Leader
	switch f.Kind {
	case FaultKill:
		t := d.pickTarget(leader)
		f.Targets = []string{t.ID}
		if err := d.back.kill(ctx, t); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error { return d.back.restart(ctx, t) }, nil
	case FaultPause:
		t := d.pickTarget(leader)
		f.Targets = []string{t.ID}
		if err := d.back.pause(t); err != nil {
			return nil, err
		}
		return func(context.Context) error { return d.back.resume(t) }, nil
	case FaultPartitionLeader:
		t := d.nodeByID(leader)
		if t == nil {
			return nil, fmt.Errorf("the leader %q is not one of the drill's nodes", leader)
		}
		f.Targets = []string{t.ID}
		if err := d.back.partition([][]*node{{t}}); err != nil {
			return nil, err
		}
		return func(context.Context) error { return d.back.heal() }, nil
	case FaultPartitionMinority:
		perm := d.rng.Perm(len(d.nodes))
		var minority []*node
		for _, i := range perm[:(len(d.nodes)-1)/2] {
			minority = append(minority, d.nodes[i])
		}
		f.Targets = ids(minority)
		if err := d.back.partition([][]*node{minority}); err != nil {
			return nil, err
		}
		return func(context.Context) error { return d.back.heal() }, nil
	case FaultBridge:
		t := d.nodes[d.rng.IntN(len(d.nodes))]
		f.Targets = []string{t.ID}
		if err := d.back.bridge(t); err != nil {
			return nil, err
		}
		return func(context.Context) error { return d.back.heal() }, nil
	case FaultTransfer:
		via := d.nodes[d.rng.IntN(len(d.nodes))]
		f.Detail = "asked " + via.ID
		if err := d.admin(via, "GOBLIN", "TRANSFER"); err != nil {
			return nil, err
		}
		return nil, nil
	case FaultRemoveRejoin:
		var followers []*node
		for _, n := range d.nodes {
			if n.ID != leader {
				followers = append(followers, n)
			}
		}
		t := followers[d.rng.IntN(len(followers))]
		via := d.nodes[d.rng.IntN(len(d.nodes))]
		f.Targets = []string{t.ID}
		f.Detail = "asked " + via.ID
		if err := d.admin(via, "GOBLIN", "REMOVE", t.ID); err != nil {
			return nil, err
		}
		// The leader adds an alive member back by itself: healing waits
		// for that.
		return func(ctx context.Context) error {
			_, err := d.waitHealthy(ctx, 30*time.Second)
			return err
		}, nil
	}
	return nil, skip("no way to inject %s here", f.Kind)
}

// admin runs one command on n, for faults that are commands.
func (d *Drill) admin(n *node, args ...string) error {
	c, err := dial(n.Addr, d.dialOpts)
	if err != nil {
		return err
	}
	defer c.close()
	_, err = c.do(10*time.Second, args...)
	return err
}

// localBackend injects faults into goblind processes on this machine.
type localBackend struct {
	d       *Drill
	net     *faults.Network // nil: partitions unsupported (netErr says why)
	netErr  error
	logDir  string
	started []*startedProc
}

type startedProc struct {
	pid  int
	done chan struct{}
}

func newLocalBackend(d *Drill, needNet bool) (*localBackend, error) {
	b := &localBackend{d: d, logDir: d.cfg.Out}
	for _, n := range d.nodes {
		if err := adoptLocal(n); err != nil {
			return nil, fmt.Errorf("node %s at %s: %w (is it a local process? for docker-compose use --compose-project)", n.ID, n.Addr, err)
		}
	}
	if needNet {
		var nodes []faults.Node
		for _, n := range d.nodes {
			nodes = append(nodes, faults.Node{Name: n.ID, PID: n.PID(), Host: hostOf(n), Ports: n.ports})
		}
		b.net, b.netErr = faults.NewNetwork(nodes...)
		if b.netErr != nil && !errors.Is(b.netErr, faults.ErrUnsupported) {
			return nil, b.netErr
		}
	}
	return b, nil
}

func (b *localBackend) supports(kind string) error {
	switch kind {
	case FaultPartitionLeader, FaultPartitionMinority, FaultBridge:
		if b.net == nil {
			return skip("network partitions are not possible here: %v", b.netErr)
		}
	case FaultDiskFull, FaultSlowDisk:
		return skip("the drill did not start these nodes, so their data is on no filesystem it may fill or slow down")
	}
	return nil
}

// refresh follows a node restarted since the drill last looked (by hand,
// or by a supervisor): its new PID, command line and ports.
func (b *localBackend) refresh(n *node) error {
	pid, err := faults.PIDByAddr(n.Addr)
	if err != nil || pid == n.PID() {
		return err
	}
	cmd, err := faults.ReadCommand(pid)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.pid, n.cmd = pid, cmd
	n.mu.Unlock()
	if err := n.readPorts(); err != nil {
		return err
	}
	if b.net != nil {
		if err := b.net.SetPID(n.ID, pid); err != nil {
			return err
		}
		return b.net.SetPorts(n.ID, n.ports)
	}
	return nil
}

func (b *localBackend) kill(ctx context.Context, n *node) error {
	if err := b.refresh(n); err != nil {
		return err
	}
	return faults.Kill(n.PID())
}

// restart starts a killed node again with its original command line and
// environment, its output in the drill's directory, and waits until it
// answers.
func (b *localBackend) restart(ctx context.Context, n *node) error {
	n.mu.Lock()
	cmd := n.cmd
	n.mu.Unlock()
	logPath := filepath.Join(b.logDir, "node-"+strings.ReplaceAll(n.ID, "/", "_")+".log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "--- goblin drill restarted this node at %s\n", time.Now().Format(time.RFC3339Nano))
	c, err := cmd.Start(log)
	if err != nil {
		return err
	}
	sp := &startedProc{pid: c.Process.Pid, done: make(chan struct{})}
	go func() { c.Wait(); close(sp.done) }()
	b.started = append(b.started, sp)
	n.setPID(c.Process.Pid)
	if err := b.d.waitPing(ctx, n, sp.done); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logPath)
	}
	if b.net != nil {
		if err := n.readPorts(); err != nil {
			return err
		}
		if err := b.net.SetPID(n.ID, n.PID()); err != nil {
			return err
		}
		return b.net.SetPorts(n.ID, n.ports)
	}
	return nil
}

func (b *localBackend) pause(n *node) error {
	if err := b.refresh(n); err != nil {
		return err
	}
	return faults.Pause(n.PID())
}
func (b *localBackend) resume(n *node) error { return faults.Resume(n.PID()) }

func (b *localBackend) partition(groups [][]*node) error {
	for _, n := range b.d.nodes {
		if err := b.refresh(n); err != nil {
			return err
		}
	}
	var names [][]string
	for _, g := range groups {
		names = append(names, ids(g))
	}
	return b.net.Partition(names...)
}

func (b *localBackend) bridge(n *node) error {
	for _, m := range b.d.nodes {
		if err := b.refresh(m); err != nil {
			return err
		}
	}
	return b.net.Bridge(n.ID)
}

func (b *localBackend) heal() error {
	if b.net == nil {
		return nil
	}
	return b.net.Heal()
}

func (b *localBackend) close() error {
	if b.net == nil {
		return nil
	}
	return b.net.Close()
}

// composeBackend injects faults into the containers of a compose project.
type composeBackend struct {
	d *Drill
	c *faults.Compose
	// net cuts links inside the containers' network namespaces; when it
	// cannot (netErr), partitions disconnect containers from their
	// networks instead, and disconnected holds what to reconnect.
	net          *faults.ComposeNetwork
	netErr       error
	disconnected map[string][]faults.Endpoint
}

func newComposeBackend(d *Drill) (*composeBackend, error) {
	b := &composeBackend{d: d, c: &faults.Compose{Project: d.cfg.ComposeProject}, disconnected: map[string][]faults.Endpoint{}}
	if err := b.c.Available(); err != nil {
		return nil, err
	}
	svcs, err := b.c.Services()
	if err != nil {
		return nil, err
	}
	// Each node's service: the container whose published port the node's
	// address uses, else the service named like the node's ID.
	ports, err := b.publishedPorts(svcs)
	if err != nil {
		return nil, err
	}
	for _, n := range d.nodes {
		_, p, _ := strings.Cut(n.Addr, ":")
		if s, ok := ports[p]; ok {
			n.service = s
		} else if _, ok := svcs[n.ID]; ok {
			n.service = n.ID
		} else {
			return nil, fmt.Errorf("node %s at %s is no service of compose project %q (services %v)", n.ID, n.Addr, d.cfg.ComposeProject, keys(svcs))
		}
	}
	var services []string
	for _, n := range d.nodes {
		services = append(services, n.service)
	}
	b.net, b.netErr = b.c.Network(services...)
	if b.netErr != nil && !errors.Is(b.netErr, faults.ErrUnsupported) {
		return nil, b.netErr
	}
	return b, nil
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// publishedPorts maps each host port a service publishes to the service.
func (b *composeBackend) publishedPorts(svcs map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for name := range svcs {
		ps, err := b.c.PublishedPorts(name)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[p] = name
		}
	}
	return out, nil
}

func (b *composeBackend) supports(kind string) error {
	switch kind {
	case FaultBridge:
		if b.net == nil {
			return skip("without rules inside the containers (%v), a partition disconnects a container from every peer and cannot cut one link", b.netErr)
		}
	case FaultDiskFull, FaultSlowDisk:
		return skip("the containers' data volumes are not the drill's to fill or slow down")
	}
	return nil
}

func (b *composeBackend) kill(_ context.Context, n *node) error { return b.c.Kill(n.service) }

func (b *composeBackend) restart(ctx context.Context, n *node) error {
	if err := b.c.Start(n.service); err != nil {
		return err
	}
	return b.d.waitPing(ctx, n, nil)
}

func (b *composeBackend) pause(n *node) error  { return b.c.Pause(n.service) }
func (b *composeBackend) resume(n *node) error { return b.c.Unpause(n.service) }

// partition cuts the links between the groups inside the containers; or,
// where that is not possible, disconnects every node of the groups from
// its networks (a container is then cut from every peer, and from its
// clients).
func (b *composeBackend) partition(groups [][]*node) error {
	if b.net != nil {
		var names [][]string
		for _, g := range groups {
			var s []string
			for _, n := range g {
				s = append(s, n.service)
			}
			names = append(names, s)
		}
		return b.net.Partition(names...)
	}
	for _, g := range groups {
		for _, n := range g {
			eps, err := b.c.Disconnect(n.service)
			if len(eps) > 0 {
				b.disconnected[n.service] = eps
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *composeBackend) bridge(n *node) error {
	if b.net == nil {
		return skip("bridge needs link cuts")
	}
	return b.net.Bridge(n.service)
}

func (b *composeBackend) heal() error {
	var errs []error
	if b.net != nil {
		errs = append(errs, b.net.Heal())
	}
	for svc, eps := range b.disconnected {
		if err := b.c.Connect(svc, eps); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(b.disconnected, svc)
	}
	return errors.Join(errs...)
}

func (b *composeBackend) close() error {
	err := b.heal()
	if b.net != nil {
		err = errors.Join(err, b.net.Close())
	}
	return err
}

// waitPing polls until n answers PING (60 s at most), or exited closes.
func (d *Drill) waitPing(ctx context.Context, n *node, exited <-chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := dial(n.Addr, d.dialOpts)
		if err == nil {
			_, err = c.do(time.Second, "PING")
			c.close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer PING 60 s after its restart: %w", n.ID, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("restarted %s exited at once", n.ID)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
