package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
)

// metaVersion is the version of the gossiped metadata format.
const metaVersion = 1

// Meta is what a node tells the others about itself through gossip. It
// rides in memberlist's node metadata (at most 512 bytes), so it is sent
// with every alive message and known to every member. It changes rarely
// (when the node gains Raft state or changes role), so it is kept readable
// rather than compact.
type Meta struct {
	Version int `json:"v"`
	// ID is the node's Raft server ID (and its memberlist name).
	ID string `json:"id"`
	// Raft is the address peers reach the node's Raft transport at.
	Raft string `json:"raft"`
	// Addr is the RESP address peers forward to; Announce the one told to
	// clients.
	Addr     string `json:"addr"`
	Announce string `json:"announce,omitempty"`
	// TLS is the client TLS address told to TLS clients ("" for none).
	TLS string `json:"tls,omitempty"`
	// Expect is the --bootstrap-expect the node was started with (0: it
	// only joins).
	Expect int `json:"expect,omitempty"`
	// State is true once the node has Raft state: a cluster exists, and
	// no one may bootstrap another.
	State bool `json:"state,omitempty"`
	// Role is the node's Raft state (Leader, Follower, Candidate), for
	// operators; the authority on who leads is Raft.
	Role string `json:"role,omitempty"`
	// Leaving is set by a node leaving gracefully: the leader removes it
	// and does not add it back (until it restarts).
	Leaving bool `json:"leaving,omitempty"`
	// Entries is the newest log entry version the node applies
	// (raftfsm.VersionGroup); builds from before group entries send none.
	// The leader writes groups only once every server sends it (the
	// node's group gate).
	Entries int `json:"entries,omitempty"`
	// Plane is planeTargets when the node's node-to-node listener takes
	// Raft connections that name the node they are for (plane.go); builds
	// from before send none, and are dialed without.
	Plane int `json:"plane,omitempty"`
}

func (m *Meta) encode() []byte {
	m.Version = metaVersion
	b, _ := json.Marshal(m)
	return b
}

var errMeta = errors.New("cluster: bad node metadata")

func decodeMeta(b []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("%w: %v", errMeta, err)
	}
	if m.Version != metaVersion || m.ID == "" {
		return Meta{}, fmt.Errorf("%w: version %d, id %q", errMeta, m.Version, m.ID)
	}
	return m, nil
}
