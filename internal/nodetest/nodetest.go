// Package nodetest starts real single nodes (Raft on an in-memory
// transport, stores in a temporary directory) for the tests of packages
// built on node.
package nodetest

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/node"
)

// StartLeader starts a single node with the given durability and returns
// it once it is a ready leader; it is closed when the test ends.
func StartLeader(t testing.TB, fsync node.Fsync) *node.Node {
	t.Helper()
	n, err := node.New(node.Config{ID: "n1", DataDir: t.TempDir(), Bootstrap: true, Fsync: fsync,
		HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for !n.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("the node did not become a ready leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return n
}
