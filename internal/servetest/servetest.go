// Package servetest serves a real single node over RESP on a loopback
// port, in process, for the tests of packages above resp (metrics, the
// benchmark tool). resp's own tests cannot import it: it imports resp.
package servetest

import (
	"testing"

	"github.com/goblindb/goblin/internal/nodetest"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/resp"
)

// Start starts a node (nodetest.Start with cfg) and serves it with a
// resp.Server on a free loopback port; both close when the test ends.
func Start(t testing.TB, cfg node.Config) (*resp.Server, *node.Node) {
	t.Helper()
	n := nodetest.Start(t, cfg)
	s := resp.NewServer(resp.Config{Addr: "127.0.0.1:0"}, n)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, n
}
