package cluster

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/goblindb/goblin/node"
)

// claim records whose bootstrap this node promised to take part in.
type claim struct {
	to    string // claimer ID; "" when free
	nonce uint64
}

// attempt is this node's own bootstrap attempt, collecting replies.
type attempt struct {
	nonce   uint64
	replies chan *message
}

// claimTimeout bounds how long a claimer waits for every reply.
const claimTimeout = 3 * time.Second

// bootstrapLoop forms a new cluster when BootstrapExpect nodes without
// Raft state see each other. See the package documentation for why exactly
// one bootstrap happens.
func (c *Cluster) bootstrapLoop() {
	defer c.wg.Done()
	if c.cfg.BootstrapExpect <= 0 {
		return
	}
	warned := ""
	for {
		wait := c.cfg.Tick/2 + rand.N(c.cfg.Tick/2+1)
		select {
		case <-c.stop:
			return
		case <-time.After(wait):
		}
		if c.leaving.Load() || c.node.HasState() {
			return
		}
		set, why, done := c.bootstrapSet()
		if done {
			c.log.Info("not bootstrapping: " + why)
			return
		}
		if set == nil {
			if why != warned {
				c.log.Info("waiting to bootstrap: " + why)
				warned = why
			}
			continue
		}
		if c.tryBootstrap(set) {
			return
		}
		// Someone else holds a claim, or a member did not answer: back
		// off a random while so competing claimers do not collide again.
		select {
		case <-c.stop:
			return
		case <-time.After(c.cfg.Tick + rand.N(2*c.cfg.Tick)):
		}
	}
}

// bootstrapSet decides whether this node should bootstrap now: it returns
// the servers of the new cluster when this node has the lowest ID among
// the BootstrapExpect lowest IDs of the alive members (none of which has
// state); otherwise a reason, and done when a cluster already exists.
func (c *Cluster) bootstrapSet() (set []node.Server, why string, done bool) {
	c.mu.Lock()
	self := c.meta
	c.mu.Unlock()
	metas := []Meta{self}
	for _, m := range c.aliveMembers() {
		if m.meta.State {
			return nil, "node " + m.meta.ID + " already has Raft state: a cluster exists, its leader will add this node", true
		}
		if m.meta.Raft == "" {
			return nil, "node " + m.meta.ID + " has not gossiped its metadata yet", false
		}
		if m.meta.Expect != 0 && m.meta.Expect != self.Expect {
			return nil, "node " + m.meta.ID + " expects a different cluster size; fix --bootstrap-expect", false
		}
		metas = append(metas, m.meta)
	}
	n := c.cfg.BootstrapExpect
	if len(metas) < n {
		return nil, "seen " + strconv.Itoa(len(metas)) + " of " + strconv.Itoa(n) + " nodes", false
	}
	sort.Slice(metas, func(i, j int) bool { return metas[i].ID < metas[j].ID })
	metas = metas[:n]
	if metas[0].ID != self.ID {
		return nil, "node " + metas[0].ID + " (lowest ID) bootstraps", false
	}
	for _, m := range metas {
		set = append(set, node.Server{ID: m.ID, Addr: m.Raft, Voter: true})
	}
	return set, "", false
}

// tryBootstrap claims every member of set and bootstraps once all granted.
// Every other member must first prove its identity over the node-to-node
// plane (verify), so only holders of the cluster's credentials become its
// first voters.
func (c *Cluster) tryBootstrap(set []node.Server) bool {
	for _, s := range set {
		if s.ID != c.cfg.ID && !c.verify(s.ID, s.Addr) {
			return false
		}
	}
	nonce := rand.Uint64() | 1
	c.mu.Lock()
	if c.grant.to != "" && c.grant.to != c.cfg.ID {
		c.mu.Unlock()
		return false
	}
	c.grant = claim{to: c.cfg.ID, nonce: nonce}
	att := &attempt{nonce: nonce, replies: make(chan *message, len(set))}
	c.attempt = att
	c.mu.Unlock()

	ids := make([]string, len(set))
	for i, s := range set {
		ids[i] = s.ID
	}
	var asked []string
	ok := true
	for _, id := range ids {
		if id == c.cfg.ID {
			continue
		}
		if err := c.send(id, msgClaim, &message{From: c.cfg.ID, Nonce: nonce, Set: ids}); err != nil {
			c.log.Info("bootstrap claim not delivered", "to", id, "error", err)
			ok = false
			break
		}
		asked = append(asked, id)
	}
	granted := map[string]bool{}
	timeout := time.NewTimer(claimTimeout)
	defer timeout.Stop()
	for ok && len(granted) < len(asked) {
		select {
		case r := <-att.replies:
			if !slices.Contains(asked, r.From) {
				continue
			}
			if !r.Granted {
				c.log.Info("bootstrap claim denied", "by", r.From, "reason", r.Reason)
				ok = false
			}
			granted[r.From] = true
		case <-timeout.C:
			c.log.Info("bootstrap claim unanswered", "asked", asked, "answered", len(granted))
			ok = false
		case <-c.stop:
			ok = false
		}
	}
	if ok {
		err := c.node.BootstrapCluster(set)
		if err == nil {
			c.log.Info("bootstrapped a new cluster", "voters", ids)
			return true
		}
		c.log.Warn("bootstrap refused", "error", err)
	}
	for _, id := range asked {
		c.send(id, msgRelease, &message{From: c.cfg.ID, Nonce: nonce})
	}
	c.mu.Lock()
	if c.grant.to == c.cfg.ID {
		c.grant = claim{}
	}
	c.attempt = nil
	c.mu.Unlock()
	return false
}

// handleClaim answers another node's bootstrap claim: granted only if this
// node has no Raft state and has promised no other live claimer. A grant
// holds until released, until the claimer is gone from gossip, or forever
// once a cluster exists (then this node has state and denies the rest).
func (c *Cluster) handleClaim(m *message) {
	granted, reason := c.decideClaim(m)
	c.log.Debug("bootstrap claim", "from", m.From, "granted", granted, "reason", reason)
	if err := c.send(m.From, msgClaimReply, &message{From: c.cfg.ID, Nonce: m.Nonce, Granted: granted, Reason: reason}); err != nil {
		c.log.Debug("bootstrap claim reply not delivered", "to", m.From, "error", err)
	}
}

func (c *Cluster) decideClaim(m *message) (bool, string) {
	if !slices.Contains(m.Set, c.cfg.ID) {
		return false, "not in the claimed set"
	}
	if c.node.HasState() {
		return false, "has Raft state"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leaving.Load() {
		return false, "leaving"
	}
	if g := c.grant.to; g != "" && g != m.From {
		if g == c.cfg.ID {
			return false, "bootstrapping itself"
		}
		if mem, ok := c.members[g]; ok && mem.state == "alive" {
			return false, "promised to " + g
		}
	}
	c.grant = claim{to: m.From, nonce: m.Nonce}
	return true, ""
}

func (c *Cluster) handleClaimReply(m *message) {
	c.mu.Lock()
	att := c.attempt
	c.mu.Unlock()
	if att == nil || att.nonce != m.Nonce {
		return
	}
	select {
	case att.replies <- m:
	default:
	}
}

func (c *Cluster) handleRelease(m *message) {
	c.mu.Lock()
	if c.grant.to == m.From && c.grant.nonce == m.Nonce {
		c.grant = claim{}
	}
	c.mu.Unlock()
}
