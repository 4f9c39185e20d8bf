package cluster

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// Node is what the cluster layer needs from the local node. *node.Node
// implements it; membership changes made here go through Raft there.
type Node interface {
	ID() string
	// ApplyForwarded proposes an entry a follower sent (leader only) and
	// returns a function that waits for its result, and one that reports,
	// without waiting, whether that wait would return at once (false when
	// it cannot tell).
	ApplyForwarded(entry []byte) (wait func() (raftfsm.Result, error), answered func() bool)
	// ProposeTogether runs fn; the entries it proposes go to Raft as one
	// batch once it returns.
	ProposeTogether(fn func())
	// ReadIndex is the leader's confirmed commit index.
	ReadIndex(ctx context.Context) (uint64, error)
	// ReadIndexNow is ReadIndex when it needs no round or wait (ok
	// false otherwise).
	ReadIndexNow() (index uint64, ok bool)
	// FollowsHere answers a leader's confirmation round: how long ago
	// this node last heard from leader, which it follows in term.
	FollowsHere(leader string, term uint64) (time.Duration, error)
	// HasState reports whether the node has Raft state (then it belongs
	// to a cluster and must never bootstrap one).
	HasState() bool
	// BootstrapCluster writes the first configuration; Raft refuses if
	// the node has state.
	BootstrapCluster(servers []node.Server) error
	Configuration() ([]node.Server, error)
	IsLeader() bool
	LeaderID() string
	RaftState() string
	AppliedIndex() uint64
	// DurableIndex is how far what the node applied is durable in its
	// log; SyncsAlways whether every entry its log holds is (--fsync
	// always). For WAITAOF on every node.
	DurableIndex() uint64
	SyncsAlways() bool
	// LogFault is the node's Raft log error (nil: it works).
	LogFault() error
	// Membership changes on the leader (they refuse elsewhere).
	AddVoter(id, addr string) error
	AddNonvoter(id, addr string) error
	RemoveServerHere(id string) error
	TransferLeadershipHere(id string) error
	// RemoveServer and TransferLeadership work from any node (a follower
	// asks the leader).
	RemoveServer(id string) error
	TransferLeadership(id string) error
	// Stopping tells the node it is about to be closed (Leave).
	Stopping()
}

// Config configures the cluster layer of one node.
type Config struct {
	// ID is the node's Raft server ID, also its gossip name.
	ID string
	// GossipAddr is the memberlist bind address (host:port);
	// GossipAdvertise the address others reach it at (default: GossipAddr;
	// a host name is resolved once, at start).
	GossipAddr      string
	GossipAdvertise string
	// RaftBind is the address of the node-to-node plane's listener (Raft
	// RPCs and forwarding; default: RaftAddr); RaftAddr the address peers
	// dial (default: the bound address; a host name is resolved once).
	RaftBind string
	RaftAddr string
	// Credentials authenticate and encrypt the node-to-node plane (mutual
	// TLS). Nil: plain TCP, which the caller must allow only on loopback.
	Credentials Credentials
	// GossipKeys encrypt and authenticate gossip (memberlist's keyring:
	// AES-GCM with 16, 24 or 32-byte keys). The first encrypts; every one
	// is accepted. None: gossip travels in clear (loopback only).
	GossipKeys [][]byte
	// Addr is the RESP address peers forward to; Announce the one told to
	// clients (default: Addr).
	Addr     string
	Announce string
	// AnnounceTLS is the client TLS address told to TLS clients ("" when
	// the node has no TLS port).
	AnnounceTLS string
	// Join lists gossip seeds (host:port); a node may list itself.
	Join []string
	// BootstrapExpect, when positive, makes the node take part in forming
	// a new cluster of that many voters once that many nodes without Raft
	// state see each other. Zero: the node only joins an existing cluster.
	BootstrapExpect int
	// MaxVoters caps the voters the leader adds; later nodes join as
	// non-voters and are promoted when a voter goes (default 5).
	MaxVoters int
	// ReapDeadAfter, when positive, makes the leader remove a node from
	// the configuration once gossip has considered it dead (or not known
	// it at all) that long. Zero: only GOBLIN REMOVE removes dead nodes.
	ReapDeadAfter time.Duration
	Logger        hclog.Logger
	// Tick is how often the node refreshes its metadata, reports progress
	// and, as leader, reconciles the configuration (default 500ms).
	Tick time.Duration
	// Transport replaces memberlist's network transport (tests use
	// memberlist.MockNetwork); Memberlist, if set, adjusts memberlist's
	// configuration before it starts (tests shorten its timings).
	Transport  memberlist.Transport
	Memberlist func(*memberlist.Config)
	// entries, if set, is the log entry version gossiped instead of this
	// build's (tests play a node of an older build).
	entries int
}

// Cluster is one node's view of the cluster: gossip membership, the
// bootstrap protocol, the leader's reconciliation of the Raft
// configuration with gossip, and forwarding to the leader. It implements
// node.Peers.
type Cluster struct {
	cfg  Config
	log  hclog.Logger
	node Node
	ml   *memberlist.Memberlist
	fwd  *forwarder
	pl   *plane
	// keyring holds the gossip keys (nil: gossip in clear).
	keyring *memberlist.Keyring
	// gossipInterval is memberlist's: how often a node passes on what it
	// heard.
	gossipInterval time.Duration
	// trans is Raft's transport over the plane.
	trans *raft.NetworkTransport
	// addrs tells trans where servers are (raftaddrs.go).
	addrs *raftAddrs
	// verified remembers the members whose identity was checked over the
	// plane, by ID, with the Raft address checked.
	verified map[string]string
	// oldBuild: members not added because they run a build that cannot
	// apply this cluster's log (appliesLog), warned of once.
	oldBuild map[string]bool

	mu      sync.Mutex
	meta    Meta               // this node's metadata
	members map[string]*member // by ID, this node excluded
	grant   claim              // whose bootstrap claim this node granted
	attempt *attempt           // this node's bootstrap attempt in flight
	missing map[string]time.Time
	// lastConf is the configuration the previous reconcile saw (nil
	// outside a leadership).
	lastConf map[string]bool

	inbox   chan []byte
	stop    chan struct{}
	wg      sync.WaitGroup
	leaving atomic.Bool
	started atomic.Bool
	closed  sync.Once
}

// member is what this node knows of another through gossip.
type member struct {
	meta  Meta
	addr  memberlist.Node // copy of memberlist's record, for sending
	state string          // alive, dead, left
	since time.Time       // when state last changed
	// applied, reported and logFault: the node's last progress report
	// (every node sends one to every other).
	applied  uint64
	reported time.Time
	logFault bool
	// durable and always: how far the node's log holds its applied
	// entries durably, and whether it syncs every append (zero and false
	// from builds that do not report them).
	durable uint64
	always  bool
}

var _ node.Peers = (*Cluster)(nil)

// New prepares the cluster layer; Start joins the gossip. The node is
// created in between, with the Cluster as its node.Peers.
func New(cfg Config) (*Cluster, error) {
	if cfg.ID == "" || cfg.Addr == "" || (cfg.RaftAddr == "" && cfg.RaftBind == "") {
		return nil, errors.New("cluster: ID, RaftBind or RaftAddr, and Addr are required")
	}
	if cfg.RaftBind == "" {
		cfg.RaftBind = cfg.RaftAddr
	}
	if cfg.GossipAddr == "" && cfg.Transport == nil {
		return nil, errors.New("cluster: GossipAddr is required")
	}
	if cfg.Announce == "" {
		cfg.Announce = cfg.Addr
	}
	if cfg.MaxVoters <= 0 {
		cfg.MaxVoters = 5
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 500 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	log := cfg.Logger.Named("cluster")
	pl, err := listenPlane(cfg.ID, cfg.RaftBind, cfg.RaftAddr, cfg.Credentials, log.Named("plane"))
	if err != nil {
		return nil, err
	}
	cfg.RaftAddr = pl.adv.String()
	c := &Cluster{
		cfg:      cfg,
		log:      log,
		pl:       pl,
		verified: map[string]string{},
		oldBuild: map[string]bool{},
		members:  map[string]*member{},
		missing:  map[string]time.Time{},
		inbox:    make(chan []byte, 256),
		stop:     make(chan struct{}),
		meta: Meta{
			ID:       cfg.ID,
			Raft:     cfg.RaftAddr,
			Plane:    planeTargets,
			Addr:     cfg.Addr,
			Announce: cfg.Announce,
			TLS:      cfg.AnnounceTLS,
			Expect:   cfg.BootstrapExpect,
			Entries:  cmp.Or(cfg.entries, raftfsm.ChunkMinVersion),
		},
	}
	c.addrs = &raftAddrs{c: c}
	c.fwd = newForwarder(c.lookupAddr, func(addr string) (net.Conn, error) {
		return pl.dial(addr, kindInternal, dialTimeout)
	})
	c.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  raftStream{pl},
		MaxPool: 8,
		// No pipelined AppendEntries: hashicorp/raft's pipeline can
		// wedge when a follower refuses an append (a newer term, or a log
		// that does not match): its decoder stops reading answers while
		// the sender waits for room for one more request, so the leader
		// never replicates to that follower again and its Raft never
		// shuts down (hashicorp/raft issue 612). Group commit keeps one
		// batch in flight anyway, so there is little to overlap. One
		// request at a time on a connection is also what lets raftConn
		// replace a connection between two requests.
		MaxRPCsInFlight:       1,
		Timeout:               10 * time.Second,
		Logger:                transportLogger{cfg.Logger.Named("transport")},
		ServerAddressProvider: c.addrs,
	})
	return c, nil
}

// RaftTransport is Raft's transport over the node-to-node plane, for
// node.Config.Transport. Closing it (the node does, when it closes) closes
// the plane.
func (c *Cluster) RaftTransport() raft.Transport { return c.trans }

// RaftAddr is the address peers reach this node's plane at.
func (c *Cluster) RaftAddr() string { return c.cfg.RaftAddr }

// Start joins the gossip and starts the cluster's loops for n.
func (c *Cluster) Start(n Node) error {
	c.node = n
	c.addrs.noteConfiguration()
	c.meta.State = n.HasState()
	c.meta.Role = n.RaftState()

	mc := memberlist.DefaultLANConfig()
	mc.Name = c.cfg.ID
	mc.Delegate = (*delegate)(c)
	mc.Events = (*events)(c)
	mc.DeadNodeReclaimTime = 5 * time.Second
	if len(c.cfg.GossipKeys) > 0 {
		kr, err := memberlist.NewKeyring(c.cfg.GossipKeys, c.cfg.GossipKeys[0])
		if err != nil {
			return fmt.Errorf("cluster: gossip key: %w", err)
		}
		mc.Keyring = kr
		c.keyring = kr
		mc.GossipVerifyIncoming = true
		mc.GossipVerifyOutgoing = true
	}
	glog := newGossipLog(c.log.Named("gossip").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}), c.cfg.ID, &c.leaving)
	mc.Logger = log.New(glog, "", 0)
	mc.LogOutput = nil
	if c.cfg.Transport != nil {
		mc.Transport = c.cfg.Transport
	} else {
		host, port, err := splitHostPort(c.cfg.GossipAddr)
		if err != nil {
			return fmt.Errorf("cluster: gossip address: %w", err)
		}
		mc.BindAddr, mc.BindPort = host, port
		mc.AdvertisePort = port
		bt, err := newBoundedTransport(host, port, c.log.Named("gossip"), mc.Logger)
		if err != nil {
			return fmt.Errorf("cluster: gossip: %w", err)
		}
		mc.Transport = bt
		if port == 0 {
			mc.BindPort = bt.GetAutoBindPort()
			mc.AdvertisePort = mc.BindPort
		}
		if adv := c.cfg.GossipAdvertise; adv != "" {
			host, port, err := splitHostPort(adv)
			if err != nil {
				return fmt.Errorf("cluster: gossip advertise address: %w", err)
			}
			ip, err := resolveIP(host)
			if err != nil {
				return fmt.Errorf("cluster: gossip advertise address: %w", err)
			}
			mc.AdvertiseAddr, mc.AdvertisePort = ip, port
		}
	}
	if c.cfg.Memberlist != nil {
		c.cfg.Memberlist(mc)
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		if bt, ok := mc.Transport.(*boundedTransport); ok {
			bt.Shutdown()
		}
		return fmt.Errorf("cluster: start gossip: %w", err)
	}
	c.ml = ml
	local := ml.LocalNode()
	glog.setAddr(hostPort(local.Addr, local.Port))
	c.gossipInterval = mc.GossipInterval
	serve := c.serveInternal
	c.pl.internal.Store(&serve)
	c.started.Store(true)
	c.wg.Add(3)
	go c.handleInbox()
	go c.tickLoop()
	go c.bootstrapLoop()
	return nil
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return host, port, nil
}

// resolveIP returns host as an IP address, resolving a name.
func resolveIP(host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return host, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return "", err
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip.String(), nil
		}
	}
	return ips[0].String(), nil
}

// Leave leaves the cluster gracefully: a leader first hands leadership
// to another voter, then the node announces its departure through gossip
// and asks the leader to remove it from the Raft configuration, so the
// remaining nodes' quorum no longer counts it. It then stops gossiping.
// The node itself is closed by the caller afterwards.
//
// When no other voter stays (every one is leaving too, or gone), the
// whole cluster is stopping: the node neither hands over leadership nor
// asks to be removed, so the configuration stays whole and the cluster
// resumes when its nodes restart. Otherwise the last of them would be
// left as the only voter, and would wait out the timeout trying to
// remove itself from a configuration without a quorum. Leadership goes
// only to a voter that stays.
func (c *Cluster) Leave(timeout time.Duration) error {
	if !c.started.Load() {
		return nil
	}
	c.leaving.Store(true)
	c.node.Stopping()
	deadline := time.Now().Add(timeout)
	// Tell the others first, so the leader does not add this node back
	// when it is removed below.
	c.mu.Lock()
	c.meta.Leaving = true
	c.mu.Unlock()
	c.logDeparture("announcing the departure through gossip", c.ml.UpdateNode(time.Until(deadline)/4), false)
	conf, err := c.node.Configuration()
	others := 0
	for _, s := range conf {
		if !s.Current && s.Voter {
			others++
		}
	}
	if err == nil && others > 0 {
		// Nodes told to stop at the same moment announce their departures
		// at the same moment: let theirs arrive before counting.
		c.sleep(min(max(leaveSettleGossips*c.gossipInterval, leaveSettleMin), time.Until(deadline)/4))
		staying := c.stayingVoters(conf)
		if staying > 0 && staying < others/2+1 {
			// Too few voters stay to elect a leader in the configuration
			// without this node: its leaving counts on the other stopping
			// nodes' leaving too. A node stopped with the others whose
			// departure arrives late (a busy machine) would be counted as
			// staying, and the first nodes would shrink the configuration
			// around it, which would then need that very node back.
			staying = c.awaitStragglers(conf, min(leaveStragglerWait, time.Until(deadline)/4))
		}
		if staying == 0 {
			c.log.Info(msgKeepConfiguration)
			others = 0
		}
	}
	if err == nil && others > 0 && c.node.IsLeader() {
		switch err := c.handOver(conf); {
		case errors.Is(err, errAllLeaving):
			// The last staying voter's departure arrived meanwhile.
			c.log.Info(msgKeepConfiguration)
			others = 0
		case err != nil:
			c.log.Warn("leadership transfer before leaving failed", "error", err)
		default:
			c.log.Info("handed leadership over before leaving")
		}
	}
	c.leaveGossip(time.Until(deadline) / 4)
	var leaveErr error
	if err == nil && others > 0 && hasID(conf, c.cfg.ID) {
		done := make(chan error, 1)
		go func() { done <- c.removeSelf(conf, deadline) }()
		select {
		case err := <-done:
			switch {
			case errors.Is(err, errAllLeaving):
				c.log.Info(msgKeepConfiguration)
			case errors.Is(err, errLeaderless):
				c.log.Warn(msgLeaderless, "waited", leaveLeaderlessWait)
			case err != nil:
				leaveErr = fmt.Errorf("cluster: removing this node from the configuration: %w", err)
			default:
				c.log.Info("left the cluster: removed from the configuration")
			}
		case <-time.After(time.Until(deadline)):
			leaveErr = errors.New("cluster: timed out waiting to be removed from the configuration")
		}
	}
	c.Shutdown()
	return leaveErr
}

// leaveGossip announces this node's departure through gossip, waiting up
// to wait for the announcement to go out. When every other member is
// leaving or gone (the whole cluster stopping), nobody may be left to
// send it to, and memberlist would wait the whole of wait for nothing:
// long enough for Raft on the last node to start an election among nodes
// that are gone. It then waits a few gossip rounds, and a departure that
// found nobody to tell is no fault.
func (c *Cluster) leaveGossip(wait time.Duration) {
	alone := c.stayingMembers() == 0
	if alone {
		wait = min(wait, max(leaveSettleGossips*c.gossipInterval, leaveSettleMin))
	}
	c.logDeparture("leaving the gossip", c.ml.Leave(wait), alone)
}

// logDeparture logs how a step of announcing this node's departure (what)
// went: a failure when every other member is leaving too, or gone (alone
// before it, or now), found nobody to tell, which is no fault.
func (c *Cluster) logDeparture(what string, err error, alone bool) {
	switch {
	case err == nil:
	case alone || c.stayingMembers() == 0:
		c.log.Debug(what+": no member stays to be told", "error", err)
	default:
		c.log.Warn(what+" failed", "error", err)
	}
}

// stayingMembers counts the other members gossip sees alive and not
// leaving.
func (c *Cluster) stayingMembers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.members {
		if m.state == "alive" {
			n++
		}
	}
	return n
}

// leaveSettleGossips is how many gossip intervals Leave waits for other
// nodes' departures before deciding whether any voter stays.
const leaveSettleGossips = 3

// leaveSettleMin is the shortest such wait, for gossip tuned faster than
// the nodes' own scheduling can be relied on.
const leaveSettleMin = 300 * time.Millisecond

// leaveStragglerWait is how long Leave waits, beyond the settling, for
// the departures of nodes stopped together with this one when the voters
// that seem to stay are too few for a quorum without it.
const leaveStragglerWait = 2 * time.Second

// stayingVoters counts the voters of conf, this node excluded, that gossip
// sees alive and not leaving.
func (c *Cluster) stayingVoters(conf []node.Server) int {
	return len(c.stayingVoterIDs(conf))
}

// stayingVoterIDs lists them, in conf's order.
func (c *Cluster) stayingVoterIDs(conf []node.Server) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, s := range conf {
		if s.Current || !s.Voter {
			continue
		}
		if m := c.members[s.ID]; m != nil && m.state == "alive" {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// awaitStragglers counts the staying voters of conf once a gossip
// interval for up to wait, and returns their number once it is 0, or
// after wait.
func (c *Cluster) awaitStragglers(conf []node.Server, wait time.Duration) int {
	end := time.Now().Add(wait)
	for {
		n := c.stayingVoters(conf)
		if n == 0 || !time.Now().Before(end) {
			return n
		}
		c.sleep(min(c.gossipInterval, time.Until(end)))
		select {
		case <-c.stop:
			return c.stayingVoters(conf)
		default:
		}
	}
}

// handOver hands leadership to a voter of conf that stays (errAllLeaving
// when none does): Raft's own choice, the most up-to-date follower, may
// be a node that is stopping too, which would hand it on again.
func (c *Cluster) handOver(conf []node.Server) error {
	ids := c.stayingVoterIDs(conf)
	if len(ids) == 0 {
		return errAllLeaving
	}
	return c.node.TransferLeadership(ids[0])
}

// sleep waits for d, or until the cluster's loops stop.
func (c *Cluster) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.stop:
	}
}

// removeSelf asks the leader to remove this node, again while there is
// no leader (an election) and time is left. The leader may also remove it
// on its own once gossip reports it left: either way it is done.
func (c *Cluster) removeSelf(conf []node.Server, deadline time.Time) error {
	// The leader usually removes a leaving node by itself, as soon as
	// gossip tells it the node is leaving (reconcile); the node may then
	// hear from no leader again, and a request of its own would wait for
	// one in vain. So the configuration it holds is watched meanwhile.
	removed := func() bool {
		conf, err := c.node.Configuration()
		return err == nil && !hasID(conf, c.cfg.ID)
	}
	lw := leaderWatch{node: c.node, seen: time.Now()}
	for {
		if removed() {
			return nil
		}
		if c.node.IsLeader() && time.Now().Add(200*time.Millisecond).Before(deadline) {
			// Leadership came back to this leaving node (another node
			// that is leaving too handed it over): hand it on to a voter
			// that stays rather than remove itself, which would shrink
			// the configuration of nodes that are all stopping; then
			// count the staying voters again. If no one takes it, the
			// leader removes itself.
			err := c.handOver(conf)
			if errors.Is(err, errAllLeaving) {
				return err
			}
			if err == nil {
				time.Sleep(200 * time.Millisecond)
				if c.stayingVoters(conf) == 0 {
					return errAllLeaving
				}
				continue
			}
			c.log.Debug("handing leadership over again before leaving failed", "error", err)
		}
		done := make(chan error, 1)
		go func() { done <- c.node.RemoveServer(c.cfg.ID) }()
		var err error
		if c.awaitRemoval(done, &err, removed, &lw) {
			return nil
		}
		if errors.Is(err, errLeaderless) {
			return err
		}
		if err == nil || errors.Is(err, node.ErrNoSuchNode) || removed() {
			return nil
		}
		if time.Now().Add(200 * time.Millisecond).After(deadline) {
			return err
		}
		c.log.Debug("removing this node from the configuration failed; retrying", "error", err)
		time.Sleep(200 * time.Millisecond)
		if lw.lost() {
			return errLeaderless
		}
		// The others' departures may have arrived since Leave counted
		// (a leader that is stopping too refuses the removal).
		if c.stayingVoters(conf) == 0 {
			return errAllLeaving
		}
	}
}

// awaitRemoval waits for a removal request's answer (in *err) and
// reports true if the configuration shows the node removed first. It
// stops waiting with errLeaderless once lw has gone without a leader for
// leaveLeaderlessWait: the request then waits for a leader, or for one
// it cannot reach, in vain.
func (c *Cluster) awaitRemoval(done <-chan error, err *error, removed func() bool, lw *leaderWatch) bool {
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case *err = <-done:
			return false
		case <-poll.C:
			if removed() {
				return true
			}
			if lw.lost() {
				*err = errLeaderless
				return false
			}
		}
	}
}

// leaveLeaderlessWait is how long a leaving node asks to be removed while
// it knows no leader. An election that can succeed ends within about
// three heartbeat timeouts (node.Config); this wait is ten of the default
// ones. Longer means no quorum is reachable from here (the node is cut
// off, or the others are stopping too without its hearing of it), and
// the removal would wait out Leave's whole timeout for nothing.
const leaveLeaderlessWait = 3 * time.Second

// leaderWatch tracks when the node last knew a leader (itself included).
type leaderWatch struct {
	node Node
	seen time.Time
}

// lost samples the node and reports whether it has known no leader for
// leaveLeaderlessWait.
func (w *leaderWatch) lost() bool {
	now := time.Now()
	if w.node.IsLeader() || w.node.LeaderID() != "" {
		w.seen = now
		return false
	}
	return now.Sub(w.seen) >= leaveLeaderlessWait
}

// msgLeaderless is logged when Leave stops without being removed because
// no leader could be found to remove it.
const msgLeaderless = "no leader to remove this node from the configuration: stopping without leaving it; the others count this node as down until it comes back or is removed (GOBLIN REMOVE)"

// errLeaderless ends removeSelf: no leader was known for
// leaveLeaderlessWait.
var errLeaderless = errors.New("cluster: no leader to remove this node")

// msgKeepConfiguration is logged when Leave stops without leaving.
const msgKeepConfiguration = "every other voter is leaving or gone: stopping without leaving the configuration, so the cluster resumes when its nodes restart"

// errAllLeaving ends removeSelf: no other voter stays, so this node stops
// without leaving the configuration.
var errAllLeaving = errors.New("cluster: every other voter is leaving")

func hasID(conf []node.Server, id string) bool {
	for _, s := range conf {
		if s.ID == id {
			return true
		}
	}
	return false
}

// Shutdown stops gossip and the cluster's loops without leaving: the other
// nodes see this one fail. Safe to call more than once.
func (c *Cluster) Shutdown() error {
	c.closed.Do(func() {
		close(c.stop)
		c.pl.internal.Store(nil)
		if c.ml != nil {
			c.ml.Shutdown()
		}
		c.wg.Wait()
		c.fwd.close()
	})
	return nil
}

// Members lists the nodes gossip knows of, this one included (node.Peers).
func (c *Cluster) Members() []node.Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []node.Member{{ID: c.meta.ID, RaftAddr: c.meta.Raft, Addr: c.meta.Addr, Announce: c.meta.Announce, AnnounceTLS: c.meta.TLS, State: "alive", Entries: c.meta.Entries}}
	for _, m := range c.members {
		out = append(out, node.Member{
			ID: m.meta.ID, RaftAddr: m.meta.Raft, Addr: m.meta.Addr, Announce: m.meta.Announce, AnnounceTLS: m.meta.TLS,
			State: m.state, Applied: m.applied, Reported: m.reported, LogFault: m.logFault, Entries: m.meta.Entries,
			Durable: m.durable, SyncsAlways: m.always,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Apply forwards an encoded entry to the leader (node.Peers).
func (c *Cluster) Apply(leader string, entry []byte) (node.Forwarded, error) {
	return c.fwd.apply(leader, entry)
}

// ReadIndex asks the leader for its read index (node.Peers).
func (c *Cluster) ReadIndex(ctx context.Context, leader string) (uint64, error) {
	return c.fwd.readIndex(ctx, leader)
}

// Follows asks the voter id whether it follows leader in term
// (node.Peers).
func (c *Cluster) Follows(ctx context.Context, id, leader string, term uint64) (time.Duration, error) {
	return c.fwd.follows(ctx, id, leader, term)
}

// Admin runs a membership change on the leader (node.Peers).
func (c *Cluster) Admin(ctx context.Context, leader string, args ...string) error {
	return c.fwd.admin(ctx, leader, args...)
}

// lookupAddr returns the plane address (the Raft address) of the node
// with that ID.
func (c *Cluster) lookupAddr(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.members[id]; ok && m.meta.Raft != "" {
		return m.meta.Raft, true
	}
	return "", false
}

// aliveMembers returns copies of the alive members, this node excluded.
func (c *Cluster) aliveMembers() []member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []member
	for _, m := range c.members {
		if m.state == "alive" {
			out = append(out, *m)
		}
	}
	return out
}

// tickLoop runs the periodic duties: metadata, progress, reconciliation,
// and joining the seeds until some other node answers.
func (c *Cluster) tickLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.Tick)
	defer t.Stop()
	var lastJoin time.Time
	joinEvery := time.Second
	for {
		if len(c.cfg.Join) > 0 && !c.leaving.Load() && c.ml.NumMembers() < 2 && time.Since(lastJoin) >= joinEvery {
			lastJoin = time.Now()
			c.join()
			if joinEvery < 8*time.Second {
				joinEvery *= 2
			}
		}
		c.refreshMeta()
		c.addrs.noteConfiguration()
		if c.node.IsLeader() {
			c.reconcile()
		} else {
			// A later leadership starts counting afresh.
			clear(c.missing)
			c.lastConf = nil
		}
		c.reportProgress()
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
	}
}

// join contacts the seeds. Seeds that do not resolve or answer yet (their
// containers are still starting) are tried again later.
func (c *Cluster) join() {
	n, err := c.ml.Join(c.cfg.Join)
	if err != nil && n == 0 {
		// Seeds not up yet refuse the connection: that is expected at
		// start. A seed that takes the connection and then fails the
		// exchange most likely has another gossip key, and this node
		// alone can tell the operator so.
		if !onlyRefused(err) {
			c.log.Warn("joining the gossip failed: a seed answered but the exchange failed; "+
				"check that every node has the same cluster secret or gossip key; will retry", "seeds", c.cfg.Join, "error", err)
			return
		}
		c.log.Debug("joining the seeds failed; will retry", "seeds", c.cfg.Join, "error", err)
		return
	}
	c.log.Debug("joined the gossip", "contacted", n, "members", c.ml.NumMembers())
}

// onlyRefused reports whether every seed of a failed join refused the
// connection (or could not be reached), as seeds that are not up yet do.
func onlyRefused(err error) bool {
	for _, line := range strings.Split(strings.ToLower(err.Error()), "\n") {
		if !strings.Contains(line, "failed to join") {
			continue
		}
		if !strings.Contains(line, "connection refused") && !strings.Contains(line, "i/o timeout") &&
			!strings.Contains(line, "no route to host") && !strings.Contains(line, "no such host") {
			return false
		}
	}
	return true
}

// refreshMeta updates and re-gossips this node's metadata when its Raft
// state or role changed.
func (c *Cluster) refreshMeta() {
	state, role := c.node.HasState(), c.node.RaftState()
	c.mu.Lock()
	changed := c.meta.State != state || c.meta.Role != role
	c.meta.State, c.meta.Role = state, role
	c.mu.Unlock()
	if changed {
		if err := c.ml.UpdateNode(time.Second); err != nil {
			c.log.Debug("gossiping metadata failed", "error", err)
		}
	}
}

// reportProgress tells the other nodes how far this node has applied the
// log, and how far that is durable: for the leader's INFO replication
// (per-follower lag), and for WAIT and WAITAOF on any node, which count
// the nodes known to hold a write, and to hold it durably.
// A node that knows no leader (an election, a partition, not yet added)
// does not report.
func (c *Cluster) reportProgress() {
	if c.node.LeaderID() == "" {
		return
	}
	c.mu.Lock()
	to := make([]memberlist.Node, 0, len(c.members))
	for id, m := range c.members {
		if id != c.cfg.ID && m.state == "alive" {
			to = append(to, m.addr)
		}
	}
	c.mu.Unlock()
	if len(to) == 0 {
		return
	}
	msg := encodeMsg(msgProgress, &message{From: c.cfg.ID, Applied: c.node.AppliedIndex(), LogFault: c.node.LogFault() != nil,
		Durable: c.node.DurableIndex(), Always: c.node.SyncsAlways()})
	for i := range to {
		c.ml.SendBestEffort(&to[i], msg)
	}
}

// send sends a user message reliably (TCP) to the member with that ID.
func (c *Cluster) send(id string, k msgKind, m *message) error {
	c.mu.Lock()
	mem, ok := c.members[id]
	var to memberlist.Node
	if ok {
		to = mem.addr
	}
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("cluster: no member %q", id)
	}
	return c.ml.SendReliable(&to, encodeMsg(k, m))
}

// handleInbox processes user messages off memberlist's receive loop.
func (c *Cluster) handleInbox() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case b := <-c.inbox:
			k, m, err := decodeMsg(b)
			if err != nil {
				c.log.Warn("dropping a bad message", "error", err)
				continue
			}
			switch k {
			case msgClaim:
				c.handleClaim(m)
			case msgClaimReply:
				c.handleClaimReply(m)
			case msgRelease:
				c.handleRelease(m)
			case msgProgress:
				c.mu.Lock()
				if mem, ok := c.members[m.From]; ok {
					mem.applied, mem.reported, mem.logFault = m.Applied, time.Now(), m.LogFault
					mem.durable, mem.always = m.Durable, m.Always
				}
				c.mu.Unlock()
			}
		}
	}
}

// delegate is memberlist's Delegate: it serves this node's metadata and
// queues user messages.
type delegate Cluster

func (d *delegate) NodeMeta(limit int) []byte {
	c := (*Cluster)(d)
	c.mu.Lock()
	b := c.meta.encode()
	c.mu.Unlock()
	if len(b) > limit {
		c.log.Error("node metadata too large for gossip", "size", len(b), "limit", limit)
		return nil
	}
	return b
}

func (d *delegate) NotifyMsg(b []byte) {
	c := (*Cluster)(d)
	select {
	case c.inbox <- append([]byte(nil), b...):
	default: // full: the sender retries (claims) or repeats (progress)
	}
}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *delegate) LocalState(join bool) []byte                { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool)     {}

// events is memberlist's EventDelegate: it keeps the member table. It
// runs under memberlist's locks, so it only updates the table.
type events Cluster

// memberlist passes the node's record as it was before the event (its
// State field is not kept up to date), so the event itself says whether
// the node is alive; a node that set Leaving before going is "left".
func (e *events) NotifyJoin(n *memberlist.Node)   { (*Cluster)(e).observe(n, true) }
func (e *events) NotifyUpdate(n *memberlist.Node) { (*Cluster)(e).observe(n, true) }
func (e *events) NotifyLeave(n *memberlist.Node)  { (*Cluster)(e).observe(n, false) }

func (c *Cluster) observe(n *memberlist.Node, alive bool) {
	if n.Name == c.cfg.ID {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[n.Name]
	if m == nil {
		m = &member{}
		c.members[n.Name] = m
	}
	if meta, err := decodeMeta(n.Meta); err == nil && meta.ID == n.Name {
		m.meta = meta
	} else if m.meta.ID == "" {
		m.meta.ID = n.Name
	}
	m.addr = *n
	m.addr.Meta = nil
	state := "alive"
	switch {
	case m.meta.Leaving:
		state = "left"
	case !alive:
		state = "dead"
	}
	if m.state != state {
		m.state, m.since = state, time.Now()
		c.log.Info("member "+state, "id", n.Name, "addr", n.Address())
	}
	if state != "alive" && c.grant.to == n.Name {
		c.grant = claim{} // a claimer that is gone cannot bootstrap
	}
}

// SetGossipKeys replaces the gossip keyring (a reload): every key of keys
// is accepted, the first encrypts, and keys no longer listed are dropped.
// A rotation is rolled through the nodes in three steps: add the new key
// second, move it first, remove the old one.
func (c *Cluster) SetGossipKeys(keys [][]byte) error {
	if len(keys) == 0 {
		return errors.New("cluster: no gossip key")
	}
	if c.keyring == nil {
		return errors.New("cluster: gossip was started without a key; restart the node to encrypt it")
	}
	kr := c.keyring
	for _, k := range keys {
		if err := kr.AddKey(k); err != nil {
			return fmt.Errorf("cluster: gossip key: %w", err)
		}
	}
	if err := kr.UseKey(keys[0]); err != nil {
		return fmt.Errorf("cluster: gossip key: %w", err)
	}
	for _, old := range kr.GetKeys() {
		if !slices.ContainsFunc(keys, func(k []byte) bool { return bytes.Equal(k, old) }) {
			if err := kr.RemoveKey(old); err != nil {
				return fmt.Errorf("cluster: gossip key: %w", err)
			}
		}
	}
	return nil
}
