package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/internal/testutil"
)

// single starts a single node as goblind does without cluster flags: no
// transport, the ID derived from the Raft address unless id is given.
func single(t *testing.T, dir, raftAddr, id string) (*Node, error) {
	t.Helper()
	n, err := New(Config{
		ID: id, DataDir: dir, RaftAddr: raftAddr, Bootstrap: true,
		HeartbeatTimeout: 50 * time.Millisecond, ElectionTimeout: 50 * time.Millisecond,
		Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { n.Close() })
	return n, nil
}

// A single node restarted on another Raft address (goblind's default ID
// follows it) keeps the ID its data directory was created with, leads
// and serves its data; an ID given explicitly that is not the
// directory's, or a cluster's directory, is refused with what would
// start it.
func TestSingleNodeKeepsItsID(t *testing.T) {
	dir := t.TempDir()
	n, err := single(t, dir, "127.0.0.1:27001", "")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "a ready leader", n.Ready)
	writeMembers(t, n, 0, 20)
	n.Close()

	n, err = single(t, dir, "127.0.0.1:27002", "")
	if err != nil {
		t.Fatalf("restart on another address: %v", err)
	}
	testutil.Poll(t, 10*time.Second, "a ready leader", n.Ready)
	if got := n.Status().ID; got != "127.0.0.1:27001" {
		t.Fatalf("the node runs as %q, want the directory's ID 127.0.0.1:27001", got)
	}
	checkMembers(t, n, 20)
	writeMembers(t, n, 20, 30)
	// A server that is not a voter joins the configuration: the
	// directory is no longer a single node's.
	if err := n.Raft().AddNonvoter("n9", "127.0.0.1:27009", 0, 5*time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	n.Close()

	_, err = single(t, dir, "127.0.0.1:27002", "other")
	if err == nil || !strings.Contains(err.Error(), "a cluster of 2 servers (voters: 127.0.0.1:27001)") {
		t.Fatalf("a cluster's directory started as a single node: %v", err)
	}

	dir = t.TempDir()
	n, err = single(t, dir, "127.0.0.1:27003", "")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "a ready leader", n.Ready)
	n.Close()
	_, err = single(t, dir, "127.0.0.1:27003", "other")
	want := fmt.Sprintf("single node %q, not of %q: start it with --id %s", "127.0.0.1:27003", "other", "127.0.0.1:27003")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("started under an explicit ID that is not the directory's: %v", err)
	}
}

// A single node left to Raft's defaults waits SingleNodeHeartbeat, not a
// cluster's 300 ms, before it elects itself (writes sent right after a
// start wait that long); a cluster's nodes keep 300 ms, and a timeout
// given explicitly is kept.
func TestSingleNodeElectsSoon(t *testing.T) {
	n, err := New(Config{DataDir: t.TempDir(), RaftAddr: "127.0.0.1:27011", Bootstrap: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	rc := n.Raft().ReloadableConfig()
	if rc.HeartbeatTimeout != SingleNodeHeartbeat || rc.ElectionTimeout != SingleNodeHeartbeat {
		t.Fatalf("single node: heartbeat %v, election %v; want %v both", rc.HeartbeatTimeout, rc.ElectionTimeout, SingleNodeHeartbeat)
	}
	testutil.Poll(t, 10*time.Second, "a ready leader", n.Ready)
	writeMembers(t, n, 0, 5)

	given, err := single(t, t.TempDir(), "127.0.0.1:27012", "")
	if err != nil {
		t.Fatal(err)
	}
	if hb := given.Raft().ReloadableConfig().HeartbeatTimeout; hb != 50*time.Millisecond {
		t.Fatalf("single node given 50ms: heartbeat %v", hb)
	}

	tc := newTestCluster(t, 3, func(c *Config) { c.HeartbeatTimeout, c.ElectionTimeout = 0, 0 })
	for _, m := range tc.nodes {
		if rc := m.Raft().ReloadableConfig(); rc.HeartbeatTimeout != DefaultHeartbeat || rc.ElectionTimeout != DefaultHeartbeat {
			t.Fatalf("cluster node: heartbeat %v, election %v; want 300ms both", rc.HeartbeatTimeout, rc.ElectionTimeout)
		}
	}
}

// A single node's clean start logs no warning: Raft's "heartbeat timeout
// reached" before it elects itself is information there.
func TestSingleNodeStartsWithoutWarning(t *testing.T) {
	var logs testutil.SyncBuffer
	n, err := New(Config{DataDir: t.TempDir(), RaftAddr: "127.0.0.1:27013", Bootstrap: true,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs})})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	testutil.Poll(t, 10*time.Second, "a ready leader", n.Ready)
	out := logs.String()
	if !strings.Contains(out, "[INFO]  raft: "+msgSingleElection) {
		t.Fatalf("no election logged as information:\n%s", out)
	}
	if strings.Contains(out, "[WARN]") || strings.Contains(out, "[ERROR]") {
		t.Fatalf("a clean start logged a warning:\n%s", out)
	}
}
