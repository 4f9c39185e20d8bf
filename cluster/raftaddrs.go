package cluster

import (
	"fmt"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// raftAddrs tells Raft's transport where to reach a server: at the Raft
// address the node gossips now, when gossip sees it alive, rather than
// the one the Raft configuration records. The configuration changes only
// through a leader, so if every node came back at a new address (the
// containers of a cluster recreated on a new network, each with a new
// IP), a configuration holding only the old addresses would let no
// candidate reach a voter, and no leader would ever be elected to record
// the new ones: the cluster would wait for an operator forever. Asked
// for votes at their gossiped addresses, the nodes elect a leader, which
// then records every address (reconcile). A node gossip does not see
// alive is reached at the configuration's address, which each node
// copies when the cluster starts and every tick (noteConfiguration), and
// one in neither, such as a server that just left while Raft's last
// requests to it end, at the address it last gossiped.
//
// The address is tagged with the server's ID (targetAddr), unless the
// node gossips that its listener predates the check (Meta.Plane): a
// connection made for one server never serves another that holds the
// address now, such as this very node, which would otherwise grant itself
// a second vote under the other server's ID.
type raftAddrs struct {
	c    *Cluster
	conf atomic.Pointer[map[string]string] // server ID -> address, from the configuration
}

var _ raft.ServerAddressProvider = (*raftAddrs)(nil)

// ServerAddr returns the address to reach server id at. Raft also asks
// it for this node's own address, which it sends in every request.
func (a *raftAddrs) ServerAddr(id raft.ServerID) (raft.ServerAddress, error) {
	if string(id) == a.c.cfg.ID {
		return raft.ServerAddress(a.c.cfg.RaftAddr), nil
	}
	a.c.mu.Lock()
	m := a.c.members[string(id)]
	var gossiped, last string
	// Untagged only for a node gossip shows is of an older build: one
	// not seen since this node started is named too.
	tag := (m == nil || m.meta.Plane >= planeTargets) && len(id) <= maxTargetID
	if m != nil {
		last = m.meta.Raft
		if m.state == "alive" {
			gossiped = last
		}
	}
	a.c.mu.Unlock()
	addr := gossiped
	if conf := a.conf.Load(); addr == "" && conf != nil {
		addr = (*conf)[string(id)]
	}
	if addr == "" {
		// Gone from gossip and from the configuration, as a server that
		// just left is while Raft's last requests to it end: where it was.
		addr = last
	}
	if addr != "" {
		if tag {
			addr = targetAddr(addr, string(id))
		}
		return raft.ServerAddress(addr), nil
	}
	// Raft then uses the address it holds.
	return "", fmt.Errorf("server %s is neither alive in gossip nor in the configuration seen last", id)
}

// noteConfiguration copies the configuration's addresses.
func (a *raftAddrs) noteConfiguration() {
	conf, err := a.c.node.Configuration()
	if err != nil {
		return
	}
	m := make(map[string]string, len(conf))
	for _, s := range conf {
		m[s.ID] = s.Addr
	}
	a.conf.Store(&m)
}
