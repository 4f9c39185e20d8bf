package main

import (
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/cluster"
	"github.com/goblindb/goblin/node"
)

// clusterOptions are the flags of cluster mode. A node runs in cluster
// mode when it is given --join or --bootstrap-expect; otherwise it is a
// single-node cluster that bootstraps itself.
type clusterOptions struct {
	advertise, announce, gossipAddr, join string
	bootstrapExpect, maxVoters            int
	reapDeadAfter, maxStaleness           time.Duration
	commitTimeout                         time.Duration
	heartbeatTimeout, electionTimeout     time.Duration
	leaveOnShutdown, leaseReads           bool

	// Derived by resolve.
	enabled    bool
	seeds      []string
	gossipAdv  string
	respAdv    string
	clientAddr string
}

func (c *clusterOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&c.advertise, "advertise", "", "HOST[:PORT] other nodes reach this node at: its host advertises the Raft and gossip ports, and HOST:PORT is the RESP address gossiped (default: --addr)")
	fs.StringVar(&c.announce, "announce", "", "HOST:PORT clients are told in CLUSTER SLOTS/NODES and ROLE (default: --advertise)")
	fs.StringVar(&c.gossipAddr, "gossip-addr", "", "gossip (memberlist) listen address (default: the RESP host, port+20000)")
	fs.StringVar(&c.join, "join", "", "gossip seeds to join, host:port,... (a node may list itself); enables cluster mode")
	fs.IntVar(&c.bootstrapExpect, "bootstrap-expect", 0, "form a new cluster once this many nodes see each other (none with state); enables cluster mode")
	fs.IntVar(&c.maxVoters, "max-voters", 5, "voters the leader keeps; later nodes join as non-voters")
	fs.DurationVar(&c.reapDeadAfter, "reap-dead-after", 0, "remove a node dead this long from the configuration (0: only GOBLIN REMOVE does)")
	fs.DurationVar(&c.maxStaleness, "max-staleness", 5*time.Second, "how far behind the leader's commit a READONLY read on a follower may be: it reflects every write acknowledged longer ago, the follower catching up first when it must; refused when it cannot catch up within this time")
	fs.DurationVar(&c.commitTimeout, "commit-timeout", 5*time.Millisecond, "longest a follower waits to learn that an entry is committed when no other entry follows it (Raft's CommitTimeout): bounds the latency of follower reads and writes, at an idle cost of a few hundred empty appends a second per follower")
	fs.DurationVar(&c.heartbeatTimeout, "heartbeat-timeout", 0, "a follower that has not heard from the leader for this long (up to three times it, drawn at random) starts an election, and a leader without a majority for this long steps down (Raft's HeartbeatTimeout and LeaderLeaseTimeout; 0: 300ms, and 20ms for a single node)")
	fs.DurationVar(&c.electionTimeout, "election-timeout", 0, "a candidate without a majority for this long (up to twice it) tries again (Raft's ElectionTimeout; 0: 300ms, or --heartbeat-timeout if longer; a single node: --heartbeat-timeout)")
	fs.BoolVar(&c.leaseReads, "lease-reads", true, "the leader serves linearizable reads under a lease from its confirmation rounds (90% of --heartbeat-timeout) instead of a round per read; needs the same --heartbeat-timeout on every node and clocks whose rates differ by less than 10%")
	fs.BoolVar(&c.leaveOnShutdown, "leave-on-shutdown", true, "on SIGTERM/SIGINT, leave the cluster (removed from the configuration) before stopping")
}

// minRaftTimeout is the shortest heartbeat, election and leader lease
// timeout and snapshot interval Raft takes (raft.ValidateConfig), and
// minCommitTimeout the shortest commit timeout.
const (
	minRaftTimeout   = 5 * time.Millisecond
	minCommitTimeout = time.Millisecond
)

// check validates the Raft timings, before anything starts: Raft refuses
// a configuration that breaks its rules only once the data directory is
// created, and in its own words. A zero value takes node's default.
func (c *clusterOptions) check() error {
	if c.heartbeatTimeout != 0 && c.heartbeatTimeout < minRaftTimeout {
		return fmt.Errorf("--heartbeat-timeout must be at least %s, not %s (0: 300ms)", minRaftTimeout, c.heartbeatTimeout)
	}
	if c.electionTimeout != 0 && c.electionTimeout < minRaftTimeout {
		return fmt.Errorf("--election-timeout must be at least %s, not %s (0: 300ms, or --heartbeat-timeout if longer)", minRaftTimeout, c.electionTimeout)
	}
	// node's defaults (node.New): a heartbeat timeout of 300ms, and an
	// election timeout of 300ms or the heartbeat timeout if longer; a
	// single node's are both 20ms, or the heartbeat timeout given.
	// resolve ran first: enabled tells a cluster node from a single one.
	heartbeat, given, unset := c.heartbeatTimeout, "", "300ms, or --heartbeat-timeout if longer"
	switch {
	case heartbeat == 0 && !c.enabled:
		heartbeat, given = node.SingleNodeHeartbeat, " (its default for a single node)"
	case heartbeat == 0:
		heartbeat, given = node.DefaultHeartbeat, " (its default)"
	}
	if !c.enabled {
		unset = "--heartbeat-timeout"
	}
	if c.electionTimeout != 0 && c.electionTimeout < heartbeat {
		return fmt.Errorf("--election-timeout %s is shorter than --heartbeat-timeout %s%s: Raft needs it at least as long; "+
			"raise --election-timeout, or leave it unset (%s)", c.electionTimeout, heartbeat, given, unset)
	}
	if c.commitTimeout < minCommitTimeout { // 0 too: it would mean Raft's default, not what was asked
		return fmt.Errorf("--commit-timeout must be at least %s, not %s", minCommitTimeout, c.commitTimeout)
	}
	if c.maxVoters < 1 { // the cluster would take it as 5
		return fmt.Errorf("--max-voters must be at least 1, not %d", c.maxVoters)
	}
	if c.bootstrapExpect < 0 {
		return fmt.Errorf("--bootstrap-expect must be a number of nodes, not %d", c.bootstrapExpect)
	}
	if c.maxStaleness <= 0 { // node would take 0 as 5s
		return fmt.Errorf("--max-staleness must be positive, not %s", c.maxStaleness)
	}
	return nil
}

// resolve derives the cluster addresses from the flags.
func (c *clusterOptions) resolve(o *options) error {
	for _, s := range strings.Split(c.join, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.seeds = append(c.seeds, s)
		}
	}
	c.enabled = len(c.seeds) > 0 || c.bootstrapExpect > 0
	if !c.enabled {
		return nil
	}
	respHost, respPort, err := net.SplitHostPort(o.addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	adv := c.advertise
	if adv == "" {
		adv = o.addr
	}
	advHost, advPort, err := net.SplitHostPort(adv)
	if err != nil { // a bare host: the RESP port
		advHost, advPort = adv, respPort
	}
	if ip := net.ParseIP(advHost); advHost == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("cluster mode needs --advertise: --addr %s is not an address other nodes can reach", o.addr)
	}
	c.respAdv = net.JoinHostPort(advHost, advPort)
	c.clientAddr = c.announce
	if c.clientAddr == "" {
		c.clientAddr = c.respAdv
	}
	if o.raftAdvertise == "" {
		_, raftPort, err := net.SplitHostPort(o.raftAddr)
		if err != nil {
			return fmt.Errorf("--raft-addr: %w", err)
		}
		o.raftAdvertise = net.JoinHostPort(advHost, raftPort)
	}
	if c.gossipAddr == "" {
		if c.gossipAddr, err = shiftPort(net.JoinHostPort(respHost, respPort), 20000); err != nil {
			return fmt.Errorf("the default --gossip-addr: %w; set --gossip-addr", err)
		}
	}
	_, gossipPort, err := net.SplitHostPort(c.gossipAddr)
	if err != nil {
		return fmt.Errorf("--gossip-addr: %w", err)
	}
	c.gossipAdv = net.JoinHostPort(advHost, gossipPort)
	if o.id == "" {
		o.id, o.idDefaulted = o.raftAdvertise, true
	}
	return nil
}

// newCluster returns the cluster layer for cluster mode, or nil.
func newCluster(o *options, creds *planeCreds, logger hclog.Logger) (*cluster.Cluster, error) {
	c := &o.cluster
	if !c.enabled {
		return nil, nil
	}
	// Clients are told the TLS port's address on the announced host; with
	// --tls-only that is the only address there is.
	announce, announceTLS := c.clientAddr, ""
	if o.tls.port != 0 {
		host, _, err := net.SplitHostPort(c.clientAddr)
		if err != nil {
			return nil, fmt.Errorf("--announce: %w", err)
		}
		announceTLS = net.JoinHostPort(host, strconv.Itoa(o.tls.port))
		if o.tls.only {
			announce = announceTLS
		}
	}
	return cluster.New(cluster.Config{
		ID:              o.id,
		GossipAddr:      c.gossipAddr,
		GossipAdvertise: c.gossipAdv,
		RaftBind:        o.raftAddr,
		RaftAddr:        o.raftAdvertise,
		Credentials:     creds.credentials(),
		GossipKeys:      creds.gossipKeys,
		Addr:            c.respAdv,
		Announce:        announce,
		AnnounceTLS:     announceTLS,
		Join:            c.seeds,
		BootstrapExpect: c.bootstrapExpect,
		MaxVoters:       c.maxVoters,
		ReapDeadAfter:   c.reapDeadAfter,
		Logger:          logger,
	})
}

// planeAddrs are the node-to-node addresses protected mode checks, by the
// flag that sets them.
func (c *clusterOptions) planeAddrs(o *options) map[string]string {
	if !c.enabled {
		return nil // a single node listens for no peer
	}
	return map[string]string{
		"--raft-addr":      o.raftAddr,
		"--raft-advertise": o.raftAdvertise,
		"--gossip-addr":    c.gossipAddr,
		"--advertise":      c.gossipAdv,
	}
}

// leaveTimeout bounds a graceful leave at shutdown.
const leaveTimeout = 10 * time.Second

func stopCluster(cl *cluster.Cluster, o *options, logger hclog.Logger) {
	if !o.cluster.leaveOnShutdown {
		cl.Shutdown()
		return
	}
	if err := cl.Leave(leaveTimeout); err != nil {
		logger.Warn("leaving the cluster", "error", err)
	}
}
