package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
)

// testCluster runs nodes in one process over raft's in-memory transport.
// Its peers forward straight to the leader's Node methods, so these tests
// exercise the node's forwarding and read logic without the network (the
// cluster package tests the same over RESP and gossip).
type testCluster struct {
	t     testing.TB
	mu    sync.Mutex
	nodes map[string]*Node
	trans map[string]*raft.InmemTransport
	cut   map[string]bool // nodes whose peers calls fail (a partition)
	// paused are nodes that take requests and never answer: a read index
	// asked of one waits until its context ends (a stopped process).
	paused map[string]bool
	// tooOld are nodes whose build does not know a confirmation round's
	// request (ErrPeerTooOld).
	tooOld map[string]bool
	// lose makes forwarded entries lose the leader's answer as a broken
	// connection does (forwardLoss); zero: none lost.
	lose forwardLoss
	logs *testutil.SyncBuffer
	opts func(*Config)
	// oldBuild are nodes whose gossip says they apply no group entries
	// (a build from before them).
	oldBuild map[string]bool
	// base holds the nodes' data directories (dir). It is made before
	// the cleanup that closes the nodes is registered, so it is removed
	// after they close: a directory made with t.TempDir afterwards would
	// be removed while its node still runs, and a file the node writes
	// meanwhile fails the removal.
	base string
}

// dir makes a fresh data directory for a node, removed after the nodes
// close.
func (tc *testCluster) dir() string {
	tc.t.Helper()
	d, err := os.MkdirTemp(tc.base, "node")
	if err != nil {
		tc.t.Fatal(err)
	}
	return d
}

func newTestCluster(t testing.TB, size int, opts func(*Config)) *testCluster {
	t.Helper()
	tc := bootCluster(t, size, opts, nil)
	tc.waitLeader()
	return tc
}

// bootCluster starts size nodes, each on a data directory seed (when not
// nil) prepares first, and bootstraps them as one cluster; they close
// when the test ends.
func bootCluster(t testing.TB, size int, opts func(*Config), seed func(id, dir string)) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, nodes: map[string]*Node{}, trans: map[string]*raft.InmemTransport{}, cut: map[string]bool{}, paused: map[string]bool{}, tooOld: map[string]bool{}, logs: &testutil.SyncBuffer{}, opts: opts, base: t.TempDir()}
	t.Cleanup(func() {
		for _, n := range tc.all() {
			n.Close()
		}
		if t.Failed() {
			t.Logf("node logs:\n%s", tc.logs.String())
		}
	})
	var servers []Server
	for i := 1; i <= size; i++ {
		id, dir := fmt.Sprintf("n%d", i), tc.dir()
		if seed != nil {
			seed(id, dir)
		}
		n := tc.start(id, dir)
		servers = append(servers, Server{ID: n.ID(), Addr: string(tc.trans[n.ID()].LocalAddr()), Voter: true})
	}
	if err := tc.node("n1").BootstrapCluster(servers); err != nil {
		t.Fatal(err)
	}
	return tc
}

// start starts node id on dir (fresh or reused), wired to the others.
func (tc *testCluster) start(id, dir string) *Node {
	tc.t.Helper()
	_, tr := raft.NewInmemTransport(raft.ServerAddress("raft-" + id))
	tc.mu.Lock()
	for oid, o := range tc.trans {
		if oid == id {
			continue
		}
		tr.Connect(o.LocalAddr(), o)
		o.Connect(tr.LocalAddr(), tr)
	}
	tc.trans[id] = tr
	tc.mu.Unlock()
	cfg := Config{
		ID:               id,
		DataDir:          dir,
		Transport:        tr,
		Fsync:            FsyncEverysec,
		Peers:            (*testPeers)(tc),
		HeartbeatTimeout: 300 * time.Millisecond,
		ElectionTimeout:  300 * time.Millisecond,
		LeaderWait:       3 * time.Second,
		MaxStaleness:     time.Second,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: id, Level: hclog.Info, Output: tc.logs}),
	}
	if tc.opts != nil {
		tc.opts(&cfg)
	}
	n, err := New(cfg)
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.mu.Lock()
	tc.nodes[id] = n
	tc.mu.Unlock()
	return n
}

func (tc *testCluster) node(id string) *Node {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.nodes[id]
}

func (tc *testCluster) all() []*Node {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var out []*Node
	for _, n := range tc.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// stop closes a node and forgets it.
func (tc *testCluster) stop(id string) {
	n := tc.node(id)
	n.Close()
	tc.mu.Lock()
	delete(tc.nodes, id)
	for _, o := range tc.trans {
		o.Disconnect(raft.ServerAddress("raft-" + id))
	}
	tc.mu.Unlock()
}

// partition cuts a node off from the others: Raft traffic both ways, and
// its forwarding.
func (tc *testCluster) partition(id string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.cut[id] = true
	tc.disconnectLocked(id)
}

// disconnectLocked drops Raft traffic to and from id; tc.mu is held.
func (tc *testCluster) disconnectLocked(id string) {
	tc.trans[id].DisconnectAll()
	for oid, o := range tc.trans {
		if oid != id {
			o.Disconnect(tc.trans[id].LocalAddr())
		}
	}
}

// pause stops a node answering, as SIGSTOP does: Raft traffic both ways
// is lost, and a read index asked of it waits until its caller gives up.
func (tc *testCluster) pause(id string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.paused[id] = true
	tc.disconnectLocked(id)
}

// waitLeader waits until every running node agrees on a leader that is
// ready to serve, and returns it.
func (tc *testCluster) waitLeader() *Node {
	tc.t.Helper()
	var leader *Node
	testutil.Poll(tc.t, 10*time.Second, "a ready leader all nodes agree on", func() bool {
		leader = nil
		ids := map[string]bool{}
		for _, n := range tc.all() {
			if tc.isCut(n.ID()) {
				continue
			}
			if n.Ready() {
				leader = n
			}
			ids[n.LeaderID()] = true
		}
		return leader != nil && len(ids) == 1 && ids[leader.ID()]
	})
	return leader
}

// leaderOtherThan waits until a node other than not is a ready leader,
// and returns it: the majority's leader once not is cut off or failing.
func (tc *testCluster) leaderOtherThan(not *Node) *Node {
	tc.t.Helper()
	var leader *Node
	testutil.Poll(tc.t, 10*time.Second, "a leader other than "+not.ID(), func() bool {
		for _, n := range tc.all() {
			if n != not && n.Ready() {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

func (tc *testCluster) isCut(id string) bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.cut[id]
}

func (tc *testCluster) followers() []*Node {
	var out []*Node
	for _, n := range tc.all() {
		if !n.IsLeader() {
			out = append(out, n)
		}
	}
	return out
}

// startNode starts a single-voter node from cfg and returns it once it is
// a ready leader; it is closed when the test ends. Fields left zero get
// the defaults nodetest.Start gives (node's own tests cannot import
// nodetest): ID "n1", a temporary DataDir, an in-memory transport, 50 ms
// timeouts, no logging.
func startNode(t testing.TB, cfg Config) *Node {
	t.Helper()
	if cfg.ID == "" {
		cfg.ID = "n1"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Bootstrap = true // a no-op on a node that has Raft state
	if cfg.Transport == nil {
		_, cfg.Transport = raft.NewInmemTransport("")
	}
	if cfg.HeartbeatTimeout == 0 {
		cfg.HeartbeatTimeout = 50 * time.Millisecond
	}
	if cfg.ElectionTimeout == 0 {
		cfg.ElectionTimeout = 50 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	testutil.Poll(t, 10*time.Second, "the node to become a ready leader", n.Ready)
	return n
}

// testPeers forwards to the leader's Node directly.
type testPeers testCluster

var errUnreachable = errors.New("unreachable")

func (p *testPeers) target(leader string) (*Node, error) {
	tc := (*testCluster)(p)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	n := tc.nodes[leader]
	if n == nil || tc.cut[leader] {
		return nil, errUnreachable
	}
	return n, nil
}

func (p *testPeers) Apply(leader string, entry []byte) (Forwarded, error) {
	n, err := p.target(leader)
	if err != nil {
		return nil, err
	}
	tc := (*testCluster)(p)
	tc.mu.Lock()
	lose := tc.lose
	tc.mu.Unlock()
	f := &testForwarded{done: make(chan struct{})}
	if lose != 0 {
		if lose == loseAnswer {
			go n.applyForwarded(entry).Wait()
		}
		f.err = ErrUncertain
		close(f.done)
		return f, nil
	}
	wait, _ := n.ApplyForwarded(entry)
	go func() {
		res, err := wait()
		f.index, f.reply, f.err = res.Index, res.Reply, err
		close(f.done)
	}()
	return f, nil
}

// forwardLoss is what a broken forwarding connection loses.
type forwardLoss int

const (
	loseAnswer forwardLoss = 1 + iota // the entry reaches the leader, its answer is lost
	loseEntry                         // the entry never reaches the leader
)

// testForwarded is the leader's answer to a forwarded entry, in process.
type testForwarded struct {
	done  chan struct{}
	index uint64
	reply []byte
	err   error
}

func (f *testForwarded) Done() <-chan struct{} { return f.done }

func (f *testForwarded) Result() (uint64, []byte, error) { return f.index, f.reply, f.err }

// answering returns node id for a request that waits for its answer: a
// paused node takes it and never answers, so it waits for ctx to end.
func (p *testPeers) answering(ctx context.Context, id string) (*Node, error) {
	n, err := p.target(id)
	if err != nil {
		return nil, err
	}
	tc := (*testCluster)(p)
	tc.mu.Lock()
	paused := tc.paused[id]
	tc.mu.Unlock()
	if paused {
		<-ctx.Done()
		return nil, ErrTimeout
	}
	return n, nil
}

func (p *testPeers) ReadIndex(ctx context.Context, leader string) (uint64, error) {
	n, err := p.answering(ctx, leader)
	if err != nil {
		return 0, err
	}
	return n.ReadIndex(ctx)
}

func (p *testPeers) Follows(ctx context.Context, id, leader string, term uint64) (time.Duration, error) {
	n, err := p.answering(ctx, id)
	if err != nil {
		return 0, err
	}
	tc := (*testCluster)(p)
	tc.mu.Lock()
	old := tc.tooOld[id]
	tc.mu.Unlock()
	if old {
		return 0, ErrPeerTooOld
	}
	return n.FollowsHere(leader, term)
}

func (p *testPeers) Admin(ctx context.Context, leader string, args ...string) error {
	n, err := p.target(leader)
	if err != nil {
		return err
	}
	switch args[0] {
	case "REMOVE":
		return n.RemoveServerHere(args[1])
	case "TRANSFER":
		if len(args) > 1 {
			return n.TransferLeadershipHere(args[1])
		}
		return n.TransferLeadershipHere("")
	}
	return fmt.Errorf("unknown admin %q", args[0])
}

// entries is the log entry version gossip reports for the node id.
func (p *testPeers) entries(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.oldBuild[id] {
		return raftfsm.VersionProposal
	}
	return raftfsm.ChunkMinVersion
}

func (p *testPeers) Members() []Member {
	var out []Member
	for _, n := range (*testCluster)(p).all() {
		out = append(out, Member{ID: n.ID(), RaftAddr: "raft-" + n.ID(), Addr: n.ID(), Announce: n.ID(), State: "alive",
			Reported: time.Now(), LogFault: n.LogFault() != nil, Entries: p.entries(n.ID())})
	}
	return out
}

// zaddEntry builds a ZADD entry; score reads a score.
func zaddEntry(key, member string, score int) *raftfsm.Entry {
	return raftfsm.CommandEntry(time.Now().UnixMilli(), 0, "zadd", key, fmt.Sprint(score), member)
}

// score reads member's score in key from n's local state ("" if absent).
func score(n *Node, key, member string) string {
	out := ""
	n.View(func(ks *keyspace.Keyspace, now int64) {
		e := ks.DB(0).Get([]byte(key), now)
		if e == nil {
			return
		}
		if s, ok := e.Z.Score([]byte(member)); ok {
			out = strings.TrimSuffix(fmt.Sprint(s), ".0")
		}
	})
	return out
}
