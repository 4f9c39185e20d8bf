// Package nodetest starts real single nodes (Raft on an in-memory
// transport, stores in a temporary directory) for the tests of packages
// built on node.
package nodetest

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node"
)

// Start starts a single-voter node from cfg (Bootstrap set) and returns
// it once it is a ready leader; it is closed when the test ends. Fields
// left zero get a test's defaults: ID "n1", a temporary DataDir, an
// in-memory transport, 50 ms heartbeat and election timeouts, no logging.
func Start(t testing.TB, cfg node.Config) *node.Node {
	t.Helper()
	if cfg.ID == "" {
		cfg.ID = "n1"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Bootstrap = true // a single voter; a no-op on a node that has Raft state
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
	n, err := node.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	testutil.Poll(t, 10*time.Second, "the node to become a ready leader", n.Ready)
	return n
}

// StartLeader starts a single node with the given durability (Start).
func StartLeader(t testing.TB, fsync node.Fsync) *node.Node {
	t.Helper()
	return Start(t, node.Config{Fsync: fsync})
}
