package cluster_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/cluster"
	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/resp"
)

// env runs whole Goblin nodes in one process: memberlist gossip on
// loopback UDP/TCP, Raft and forwarding over each node's node-to-node
// plane on a loopback port, and each node's RESP server on another.
type env struct {
	t     testing.TB
	seed  uint64
	rng   *rand.Rand
	logs  testutil.SyncBuffer
	boots atomic.Int32 // successful bootstraps, over every node and restart

	mu      sync.Mutex
	nodes   map[string]*tnode
	gossip  map[string]string // stable gossip address per node ID
	raft    map[string]string // stable Raft (plane) address per node ID
	seeds   []string
	opts    func(*cluster.Config)
	nodeCfg func(*node.Config)
	// password is every node's requirepass.
	password string
	// creds, when set, give each node its plane credentials and gossip
	// keys (nil: plain TCP and clear gossip, as on loopback).
	creds func(id string) (cluster.Credentials, [][]byte)
}

type tnode struct {
	id   string
	dir  string
	addr string
	n    *node.Node
	c    *cluster.Cluster
	srv  *resp.Server
	rdb  *redis.Client
}

// newEnv prepares an environment whose seeds are the gossip addresses of
// nodes n1..n<seeds>. Randomized choices use a seed printed in the log
// (set GOBLIN_SEED to replay one).
func newEnv(t testing.TB, seeds int) *env {
	seed := testutil.Seed(t)
	e := &env{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 1)), nodes: map[string]*tnode{}, gossip: map[string]string{}, raft: map[string]string{}}
	for i := 1; i <= seeds; i++ {
		e.seeds = append(e.seeds, e.gossipAddr(fmt.Sprintf("n%d", i)))
	}
	t.Cleanup(func() {
		for _, tn := range e.all() {
			e.kill(tn.id)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", e.logs.String())
		}
	})
	return e
}

func (e *env) gossipAddr(id string) string { return e.stableAddr(e.gossip, id) }

func (e *env) raftAddr(id string) string { return e.stableAddr(e.raft, id) }

// stableAddr gives node id the same address in m at every restart, as a
// node keeps its addresses across restarts.
func (e *env) stableAddr(m map[string]string, id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, ok := m[id]; ok {
		return a
	}
	a := testutil.FreeAddr(e.t, "")
	m[id] = a
	return a
}

// start starts node id with bootstrap-expect expect on dir ("" for a fresh
// directory). The node's memberlist, node and RESP server are stopped at
// the end of the test.
func (e *env) start(id string, expect int, dir string) *tnode {
	e.t.Helper()
	if dir == "" {
		dir = e.t.TempDir()
		// Cleanups run last first: stop the node on dir before the
		// directory is removed, not only at the end of newEnv's cleanup.
		e.t.Cleanup(func() { e.kill(id) })
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: id, Level: hclog.Info, Output: &e.logs})
	addr := testutil.FreeAddr(e.t, "")
	cfg := cluster.Config{
		ID:              id,
		GossipAddr:      e.gossipAddr(id),
		RaftBind:        e.raftAddr(id),
		Addr:            addr,
		Join:            e.seeds,
		BootstrapExpect: expect,
		Logger:          logger,
		Tick:            100 * time.Millisecond,
		Memberlist:      fastGossip,
	}
	if e.creds != nil {
		cfg.Credentials, cfg.GossipKeys = e.creds(id)
	}
	if e.opts != nil {
		e.opts(&cfg)
	}
	c, err := cluster.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ncfg := node.Config{
		ID:               id,
		DataDir:          dir,
		Transport:        c.RaftTransport(),
		Fsync:            node.FsyncEverysec,
		Peers:            c,
		HeartbeatTimeout: time.Second,
		ElectionTimeout:  time.Second,
		LeaderWait:       5 * time.Second,
		Logger:           logger,
	}
	if e.nodeCfg != nil {
		e.nodeCfg(&ncfg)
	}
	n, err := node.New(ncfg)
	if err != nil {
		c.RaftTransport().(io.Closer).Close()
		e.t.Fatal(err)
	}
	srv := resp.NewServer(resp.Config{Addr: addr, RequirePass: e.password}, n)
	if err := srv.Listen(); err != nil {
		n.Close()
		e.t.Fatal(err)
	}
	srv.Serve()
	if err := c.Start(&countingNode{Node: n, boots: &e.boots}); err != nil {
		srv.Close()
		n.Close()
		e.t.Fatal(err)
	}
	tn := &tnode{id: id, dir: dir, addr: addr, n: n, c: c, srv: srv, rdb: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2, Password: e.password})}
	e.mu.Lock()
	e.nodes[id] = tn
	e.mu.Unlock()
	return tn
}

// fastGossip shortens memberlist's timings for loopback tests.
func fastGossip(c *memberlist.Config) {
	c.TCPTimeout = time.Second
	c.IndirectChecks = 1
	c.RetransmitMult = 2
	c.SuspicionMult = 2
	c.PushPullInterval = 2 * time.Second
	c.ProbeTimeout = 200 * time.Millisecond
	c.ProbeInterval = 300 * time.Millisecond
	c.GossipInterval = 50 * time.Millisecond
	c.GossipToTheDeadTime = 5 * time.Second
	c.DeadNodeReclaimTime = time.Second
}

// countingNode counts successful bootstraps.
type countingNode struct {
	*node.Node
	boots *atomic.Int32
}

func (c *countingNode) BootstrapCluster(s []node.Server) error {
	err := c.Node.BootstrapCluster(s)
	if err == nil {
		c.boots.Add(1)
	}
	return err
}

// kill stops a node abruptly (no leave): gossip sees it fail.
func (e *env) kill(id string) {
	tn := e.forget(id)
	if tn == nil {
		return
	}
	tn.rdb.Close()
	tn.c.Shutdown()
	tn.srv.Close()
	tn.n.Close()
}

// leave stops a node gracefully: it leaves the cluster first.
func (e *env) leave(id string) {
	tn := e.node(id)
	if err := tn.c.Leave(10 * time.Second); err != nil {
		e.t.Errorf("%s leaving: %v", id, err)
	}
	e.kill(id)
}

func (e *env) forget(id string) *tnode {
	e.mu.Lock()
	defer e.mu.Unlock()
	tn := e.nodes[id]
	delete(e.nodes, id)
	return tn
}

func (e *env) node(id string) *tnode {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nodes[id]
}

func (e *env) all() []*tnode {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*tnode
	for _, tn := range e.nodes {
		out = append(out, tn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// waitFormed waits until every running node agrees on a ready leader
// whose configuration lists exactly the running nodes, voters as many as
// wantVoters, and returns the leader.
func (e *env) waitFormed(wantVoters int) *tnode {
	e.t.Helper()
	var leader *tnode
	testutil.Poll(e.t, 30*time.Second, "the cluster to form", func() bool {
		leader = nil
		nodes := e.all()
		for _, tn := range nodes {
			if tn.n.Ready() {
				leader = tn
			}
		}
		if leader == nil {
			return false
		}
		for _, tn := range nodes {
			if tn.n.LeaderID() != leader.id {
				return false
			}
		}
		conf, err := leader.n.Configuration()
		if err != nil || len(conf) != len(nodes) {
			return false
		}
		voters := 0
		for _, s := range conf {
			if e.node(s.ID) == nil {
				return false
			}
			if s.Voter {
				voters++
			}
		}
		return voters == wantVoters
	})
	return leader
}

func (e *env) followers() []*tnode {
	var out []*tnode
	for _, tn := range e.all() {
		if !tn.n.IsLeader() {
			out = append(out, tn)
		}
	}
	return out
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 2)) }
