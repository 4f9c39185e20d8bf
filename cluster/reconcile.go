package cluster

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// reconcile brings the Raft configuration in line with gossip. It runs on
// the leader every tick:
//
//   - a member that left gracefully is removed;
//   - with ReapDeadAfter set, a member dead (or unknown to gossip) for that
//     long is removed;
//   - an alive member missing from the configuration is added, as a voter
//     while there are fewer than MaxVoters, as a non-voter beyond;
//   - a member whose Raft address changed (a container that restarted
//     with a new IP) is re-added at the new address;
//   - a member not alive whose Raft address answers as another node's
//     (restarted there under a new ID) is replaced by it;
//   - non-voters are promoted while voters are fewer than MaxVoters;
//   - the leader's own entry gets its current Raft address: a node
//     restarted at a new address that wins an election before another
//     leader records the change would otherwise keep the old one, which
//     the others use for its votes and for handing leadership to it.
//
// Each change is one Raft configuration entry, committed before the next.
func (c *Cluster) reconcile() {
	if c.leaving.Load() {
		return
	}
	conf, err := c.node.Configuration()
	if err != nil {
		return
	}
	c.mu.Lock()
	members := make(map[string]member, len(c.members))
	for id, m := range c.members {
		members[id] = *m
	}
	c.mu.Unlock()

	inConf := map[string]node.Server{}
	voters := 0
	for _, s := range conf {
		inConf[s.ID] = s
		if s.Voter {
			voters++
		}
	}
	c.noteRemovals(inConf)

	// Removals first: they may make room for voters.
	now := time.Now()
	for _, s := range conf {
		if s.Current {
			continue
		}
		m, known := members[s.ID]
		if known && m.state == "alive" {
			delete(c.missing, s.ID)
			continue
		}
		if known && m.state == "left" {
			c.remove(s, "left the cluster")
			if s.Voter {
				voters--
			}
			continue
		}
		first, ok := c.missing[s.ID]
		if !ok {
			first = now
			if known {
				first = m.since
			}
			c.missing[s.ID] = first
		}
		if c.cfg.ReapDeadAfter > 0 && now.Sub(first) >= c.cfg.ReapDeadAfter {
			c.remove(s, "dead for "+now.Sub(first).Round(time.Second).String())
			if s.Voter {
				voters--
			}
		}
	}

	if s, ok := inConf[c.cfg.ID]; ok && s.Addr != c.cfg.RaftAddr && c.vacate(inConf, c.cfg.RaftAddr, s.ID) {
		if c.change("updated its own address", s.ID, c.cfg.RaftAddr, c.node.AddVoter(s.ID, c.cfg.RaftAddr)) {
			s.Addr = c.cfg.RaftAddr
			inConf[s.ID] = s
		}
	}

	ids := make([]string, 0, len(members))
	for id, m := range members {
		if m.state == "alive" && m.meta.Raft != "" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := members[id]
		s, ok := inConf[id]
		if !ok && !c.appliesLog(id, m.meta) {
			continue
		}
		if (!ok || s.Addr != m.meta.Raft) && !c.verify(id, m.meta.Raft) {
			continue
		}
		if !ok {
			if old, taken := holderOf(inConf, m.meta.Raft); taken && !old.Current && !aliveIn(members, old.ID) {
				// A node gone from gossip whose Raft address now answers
				// as another: a node restarted there under a new ID (a
				// wiped data directory and a new --id). Raft refuses two
				// servers at one address, so the new one could never be
				// added while the old one stays.
				if c.remove(old, "its Raft address now belongs to "+id) {
					delete(inConf, old.ID)
					if old.Voter {
						voters--
					}
				}
			}
		}
		switch {
		case !ok && voters < c.cfg.MaxVoters:
			if c.change("added voter", id, m.meta.Raft, c.node.AddVoter(id, m.meta.Raft)) {
				voters++
			}
		case !ok:
			c.change("added non-voter", id, m.meta.Raft, c.node.AddNonvoter(id, m.meta.Raft))
		case s.Addr != m.meta.Raft && !c.vacate(inConf, m.meta.Raft, id):
			// The address could not be freed: tried again next tick.
		case s.Addr != m.meta.Raft:
			what, add := "updated voter address", c.node.AddVoter
			if !s.Voter {
				what, add = "updated non-voter address", c.node.AddNonvoter
			}
			if c.change(what, id, m.meta.Raft, add(id, m.meta.Raft)) {
				s.Addr = m.meta.Raft
				inConf[id] = s
			}
		case !s.Voter && voters < c.cfg.MaxVoters:
			if c.change("promoted to voter", id, m.meta.Raft, c.node.AddVoter(id, m.meta.Raft)) {
				voters++
			}
		}
	}
}

// vacate frees addr in the configuration for server id, which is known
// to be at addr now (this node's own address, or one that answered with
// id's identity: verify). Raft refuses two servers at one address, and
// nodes restarted at each other's addresses (containers started again
// and handed the same IPs in another order) each need an address the
// configuration still gives another: no address could be recorded as it
// stood, every reconcile failed for good, and a request Raft sent to an
// address it held reached another node than the one it was meant for.
// Whoever the configuration places at addr is not there, so it is given
// a placeholder address (movingAddr) until its own update records where
// it is. inConf is updated; false if the change failed.
func (c *Cluster) vacate(inConf map[string]node.Server, addr, id string) bool {
	for _, o := range inConf {
		if o.ID == id || o.Addr != addr {
			continue
		}
		what, add := "moved a voter off an address it no longer holds", c.node.AddVoter
		if !o.Voter {
			what, add = "moved a non-voter off an address it no longer holds", c.node.AddNonvoter
		}
		placeholder := movingAddr(o.ID)
		if !c.change(what, o.ID, placeholder, add(o.ID, placeholder)) {
			return false
		}
		o.Addr = placeholder
		inConf[o.ID] = o
	}
	return true
}

// movingAddr is the placeholder Raft address of server id while the
// address the configuration gave it belongs to another node: it cannot
// be parsed as host:port, so nothing is dialed at it. Raft reaches the
// server meanwhile at the address it gossips (raftAddrs).
func movingAddr(id string) string { return "(moving) " + id }

// noteRemovals forgets the identity check of every node that left the
// configuration since the previous reconcile, whoever removed it: an
// alive member is added back only once its Raft address answers again
// with its ID. A node removed a moment after it was killed, while gossip
// still counts it alive, so stays out. The first reconcile of a
// leadership has no previous one to compare with (a node may have been
// removed just before it, GOBLIN REMOVE right after the election): it
// forgets every check, and the nodes it adds are checked again.
func (c *Cluster) noteRemovals(inConf map[string]node.Server) {
	if c.lastConf == nil {
		c.mu.Lock()
		clear(c.verified)
		c.mu.Unlock()
	}
	for id := range c.lastConf {
		if _, ok := inConf[id]; !ok {
			c.mu.Lock()
			delete(c.verified, id)
			c.mu.Unlock()
		}
	}
	c.lastConf = make(map[string]bool, len(inConf))
	for id := range inConf {
		c.lastConf[id] = true
	}
}

// holderOf is the server inConf places at addr.
func holderOf(inConf map[string]node.Server, addr string) (node.Server, bool) {
	for _, s := range inConf {
		if s.Addr == addr {
			return s, true
		}
	}
	return node.Server{}, false
}

// aliveIn reports whether gossip counts id alive.
func aliveIn(members map[string]member, id string) bool {
	m, ok := members[id]
	return ok && m.state == "alive"
}

func (c *Cluster) remove(s node.Server, why string) bool {
	if err := c.node.RemoveServerHere(s.ID); err != nil {
		c.log.Warn("removing a node failed", "id", s.ID, "reason", why, "error", err)
		return false
	}
	delete(c.missing, s.ID)
	c.log.Info("removed a node from the configuration", "id", s.ID, "reason", why)
	return true
}

func (c *Cluster) change(what, id, addr string, err error) bool {
	if err != nil {
		c.log.Warn("configuration change failed", "change", what, "id", id, "raft", addr, "error", err)
		return false
	}
	c.log.Info("configuration: "+what, "id", id, "raft", addr)
	return true
}

// verifyWait bounds the identity check of a node about to be added.
const verifyWait = 2 * time.Second

// verify checks, before a node is added to the configuration (or its
// address changed), that its Raft address answers on the node-to-node
// plane with its own ID. The plane's handshake proves the node holds the
// cluster's credentials, so gossip alone never makes a voter: a node that
// only got into the gossip cannot pass, nor can a node gossiping an
// address that is not its own. A success is remembered for that address.
func (c *Cluster) verify(id, addr string) bool {
	c.mu.Lock()
	done := c.verified[id] == addr
	c.mu.Unlock()
	if done {
		return true
	}
	got, err := c.askID(addr)
	if err == nil && got != id {
		err = fmt.Errorf("it answers as %q", got)
	}
	if err != nil {
		c.log.Warn("not adding a node: its Raft address does not prove its identity", "id", id, "raft", addr, "error", err)
		return false
	}
	c.mu.Lock()
	c.verified[id] = addr
	c.mu.Unlock()
	return true
}

// appliesLog reports whether a node gossiping meta can apply every log
// entry this build writes (group entries, Meta.Entries); a node of an
// older build is not added, since it would record the cluster's groups as
// failed while the others apply them, and is named once in a warning.
func (c *Cluster) appliesLog(id string, meta Meta) bool {
	if meta.Entries >= raftfsm.VersionGroup {
		return true
	}
	c.mu.Lock()
	warned := c.oldBuild[id]
	c.oldBuild[id] = true
	c.mu.Unlock()
	if !warned {
		c.log.Warn("not adding a node: it runs an older build, which cannot apply this cluster's log; upgrade it", "id", id, "raft", meta.Raft)
	}
	return false
}

// askID asks the node at a plane address for its ID.
func (c *Cluster) askID(addr string) (string, error) {
	nc, err := c.pl.dial(addr, kindInternal, dialTimeout)
	if err != nil {
		return "", err
	}
	pc := newConn(nc)
	defer pc.close()
	cl, err := pc.send([]byte(cmdID))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), verifyWait)
	defer cancel()
	v, err := cl.wait(ctx)
	if err != nil {
		return "", err
	}
	if v.Kind != '$' {
		return "", fmt.Errorf("unexpected %s reply %q", cmdID, v.Str)
	}
	return string(v.Str), nil
}
