package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/cluster"
	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/internal/tlsconf"
	"github.com/goblindb/goblin/raftfsm"
	"github.com/goblindb/goblin/resp/wire"
)

// These tests play an outsider on the network against the node-to-node
// plane and the gossip port, as the threat model in docs/security.md
// describes: without the cluster's credentials nothing reaches a log,
// nobody joins, and nothing an insider's peer sends crashes a node.

// writeSecret writes a fresh cluster secret to a file and returns its path.
func writeSecret(t testing.TB) string {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	p := filepath.Join(t.TempDir(), "cluster-secret")
	if err := os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// zaddEntry is a well-formed log entry adding member to key.
func zaddEntry(key, member string) []byte {
	return raftfsm.CommandEntry(time.Now().UnixMilli(), 0, "ZADD", key, "1", member).Encode(nil)
}

// injectAppendEntries plays a Raft leader of a high term with
// hashicorp/raft's own TCP transport: it sends AppendEntries carrying a
// valid ZADD entry and a random one to target. It returns the error the
// transport met (nil would mean the node answered).
func injectAppendEntries(t testing.TB, target string) error {
	t.Helper()
	trans, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer trans.Close()
	junk := make([]byte, 64)
	rand.Read(junk)
	req := &raft.AppendEntriesRequest{
		RPCHeader:    raft.RPCHeader{ID: []byte("outsider"), Addr: []byte(trans.LocalAddr())},
		Term:         1000,
		PrevLogEntry: 0,
		PrevLogTerm:  0,
		Entries: []*raft.Log{
			{Index: 1, Term: 1000, Type: raft.LogCommand, Data: zaddEntry("injected", "evil")},
			{Index: 2, Term: 1000, Type: raft.LogCommand, Data: junk},
		},
		LeaderCommitIndex: 2,
	}
	var resp raft.AppendEntriesResponse
	return trans.AppendEntries("target", raft.ServerAddress(target), req, &resp)
}

// A single node opens no Raft port at all: an outsider with Raft's own
// transport finds nothing to talk to, and the node is untouched.
func TestOutsiderRaftSingleNode(t *testing.T) {
	g := StartGoblind(t, NodeOptions{Args: []string{"--requirepass", "pw"}, NoWait: true})
	c := g.Client(func(o *redis.Options) { o.Password = "pw" })
	defer c.Close()
	testutil.Eventually(t, 20*time.Second, func() error { return c.Ping(context.Background()).Err() })
	if err := injectAppendEntries(t, g.Raft); err == nil {
		t.Fatal("AppendEntries to a single node's Raft address was answered")
	} else {
		t.Logf("AppendEntries to %s: %v", g.Raft, err)
	}
	if n, err := c.Exists(context.Background(), "injected").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS injected: %v %v", n, err)
	}
}

// A cluster with a secret accepts no Raft RPC from an outsider: the TLS
// handshake fails, so nothing reaches any node's log. The same holds for
// a cluster in protected mode (no credentials, loopback only) against
// Raft's plain transport, which does not speak the plane's preamble.
func TestOutsiderRaftCluster(t *testing.T) {
	for _, mode := range []string{"secret", "protected"} {
		t.Run(mode, func(t *testing.T) {
			var args []string
			if mode == "secret" {
				args = []string{"--cluster-secret-file", writeSecret(t)}
			}
			nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3, Args: args})
			leader := WaitLeader(t, nodes, 30*time.Second)
			ctx := context.Background()
			before := settledApplied(t, leader, len(nodes))
			for _, n := range nodes {
				if err := injectAppendEntries(t, n.Raft); err == nil {
					t.Fatalf("AppendEntries to %s's Raft address was answered", n.ID)
				} else {
					t.Logf("AppendEntries to %s (%s): %v", n.ID, n.Raft, err)
				}
			}
			// The cluster still works, and nothing was injected.
			if err := leader.Client().ZAdd(ctx, "real", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes {
				if x, err := n.Client().Exists(ctx, "injected").Result(); err != nil || x != 0 {
					t.Fatalf("%s: EXISTS injected: %v %v", n.ID, x, err)
				}
				if !n.Running() {
					t.Fatalf("%s exited", n.ID)
				}
			}
			if after := nodeApplied(t, leader); after != before+1 {
				t.Fatalf("the leader applied %d entries for one write", after-before)
			}
		})
	}
}

// settledApplied waits until n's configuration holds voters voters and
// its applied index stays put for half a second (the cluster has formed:
// no configuration change is in flight), and returns that index.
func settledApplied(t testing.TB, n *ClusterNode, voters int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		applied := nodeApplied(t, n)
		if applied != last || len(configIDs(t, n)) != voters {
			last, since = applied, time.Now()
		} else if time.Since(since) >= 500*time.Millisecond {
			return applied
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: the configuration did not settle at %d voters with a steady applied index", n.ID, voters)
	return 0
}

// nodeApplied is a node's applied index from GOBLIN NODES.
func nodeApplied(t testing.TB, n *ClusterNode) int {
	t.Helper()
	ns, err := GoblinNodes(context.Background(), n.Client())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ns {
		if m["self"] == "1" || m["self"] == "true" {
			var v int
			fmt.Sscan(m["applied"], &v)
			return v
		}
	}
	t.Fatal("GOBLIN NODES has no self row")
	return 0
}

// configIDs returns the IDs in the Raft configuration, as GOBLIN NODES
// on n reports them.
func configIDs(t testing.TB, n *ClusterNode) []string {
	t.Helper()
	ns, err := GoblinNodes(context.Background(), n.Client())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ns {
		if m["suffrage"] != "none" {
			ids = append(ids, m["id"])
		}
	}
	return ids
}

// knows reports whether any node's GOBLIN NODES lists id at all (in the
// configuration or in gossip).
func knows(t testing.TB, nodes []*ClusterNode, id string) bool {
	for _, n := range nodes {
		ns, err := GoblinNodes(context.Background(), n.Client())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ns {
			if m["id"] == id {
				return true
			}
		}
	}
	return false
}

// A goblind pointed at a cluster's gossip port without the cluster's key
// (none, or another secret's) is never seen, and never becomes a member;
// one with the secret joins (the test's own check that it can fail).
func TestGossipJoinWithoutKey(t *testing.T) {
	secret := writeSecret(t)
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3, Args: []string{"--cluster-secret-file", secret}})
	leader := WaitLeader(t, nodes, 30*time.Second)
	seeds := make([]string, len(nodes))
	for i, n := range nodes {
		seeds[i] = n.Gossip
	}
	join := func(id string, extra ...string) *Goblind {
		args := append([]string{"--id", id, "--gossip-addr", testutil.FreeAddr(t, ""), "--join", strings.Join(seeds, ","), "--log-level", "info", "--leave-on-shutdown=false"}, extra...)
		return StartGoblind(t, NodeOptions{Args: args})
	}
	nokey := join("nokey")
	wrong := join("wrongkey", "--cluster-secret-file", writeSecret(t))
	// Gossip probes every few hundred ms and pushes state every 30 s;
	// joins are retried with backoff: 10 s covers several of each try.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, id := range []string{"nokey", "wrongkey"} {
			if knows(t, nodes, id) {
				t.Fatalf("the cluster knows %s, which has no key", id)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, g := range []*Goblind{nokey, wrong} {
		ns, err := GoblinNodes(context.Background(), g.Client())
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 1 {
			t.Fatalf("an outsider sees %d nodes: %v", len(ns), ns)
		}
	}
	// The control: the same join with the secret succeeds.
	join("friend", "--cluster-secret-file", secret)
	testutil.Eventually(t, 30*time.Second, func() error {
		for _, id := range configIDs(t, leader) {
			if id == "friend" {
				return nil
			}
		}
		return fmt.Errorf("friend not in the configuration yet: %v", configIDs(t, leader))
	})
}

// With certificate files, a node whose certificate comes from another CA
// never enters the Raft configuration, even when it has the gossip key
// and so shows in gossip.
func TestClusterTLSRogueCertificate(t *testing.T) {
	dir := t.TempDir()
	files, err := tlsconf.WriteSet(dir, []string{"127.0.0.1"}, "n1", "n2", "n3", "friend")
	if err != nil {
		t.Fatal(err)
	}
	rogueDir := t.TempDir()
	rogue, err := tlsconf.WriteSet(rogueDir, []string{"127.0.0.1"}, "rogue")
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	env := []string{"GOBLIN_GOSSIP_KEY=" + base64.StdEncoding.EncodeToString(key)}
	tlsArgs := func(f tlsconf.Files) []string {
		return []string{"--cluster-tls-cert-file", f.Cert, "--cluster-tls-key-file", f.Key, "--cluster-tls-ca-file", f.CA}
	}
	// StartCluster gives every node the same flags: the files hold one
	// certificate each, so start the three by hand.
	var nodes []*ClusterNode
	var seeds []string
	for i := 1; i <= 3; i++ {
		n := &ClusterNode{ID: fmt.Sprintf("n%d", i), Gossip: testutil.FreeAddr(t, "")}
		nodes = append(nodes, n)
		seeds = append(seeds, n.Gossip)
	}
	for _, n := range nodes {
		args := append([]string{"--id", n.ID, "--gossip-addr", n.Gossip, "--join", strings.Join(seeds, ","), "--bootstrap-expect", "3",
			"--log-level", "info", "--leave-on-shutdown=false"}, tlsArgs(files[n.ID])...)
		n.Goblind = StartGoblind(t, NodeOptions{Args: args, Env: env, NoWait: true})
	}
	for _, n := range nodes {
		n.WaitReady(45 * time.Second)
	}
	leader := WaitLeader(t, nodes, 30*time.Second)
	start := func(id string, f tlsconf.Files) {
		args := append([]string{"--id", id, "--gossip-addr", testutil.FreeAddr(t, ""), "--join", strings.Join(seeds, ","), "--log-level", "info", "--leave-on-shutdown=false"}, tlsArgs(f)...)
		StartGoblind(t, NodeOptions{Args: args, Env: env})
	}
	start("rogue", rogue["rogue"])
	testutil.Eventually(t, 20*time.Second, func() error {
		if !knows(t, nodes, "rogue") {
			return fmt.Errorf("gossip has not seen the rogue node yet")
		}
		return nil
	})
	for range 20 { // a few reconciliation ticks
		for _, id := range configIDs(t, leader) {
			if id == "rogue" {
				t.Fatal("a node with a certificate from another CA entered the configuration")
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if !strings.Contains(leader.Log(), "does not prove its identity") {
		t.Fatalf("the leader did not log why it refused the rogue node")
	}
	start("friend", files["friend"])
	testutil.Eventually(t, 30*time.Second, func() error {
		for _, id := range configIDs(t, leader) {
			if id == "friend" {
				return nil
			}
		}
		return fmt.Errorf("friend not in the configuration yet")
	})
}

// The internal commands are not on the client port: unknown, as Redis
// answers an unknown command, and not listed by COMMAND.
func TestInternalCommandsNotOnClientPort(t *testing.T) {
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 1})
	c := nodes[0].Client()
	ctx := context.Background()
	for _, name := range []string{"GOBLIN.APPLY", "GOBLIN.READINDEX", "GOBLIN.ADMIN", "GOBLIN.ID"} {
		err := c.Do(ctx, name, "x").Err()
		want := fmt.Sprintf("ERR unknown command '%s', with args beginning with: 'x' ", name)
		if err == nil || err.Error() != want {
			t.Fatalf("%s on the client port: %v, want %q", name, err, want)
		}
	}
	names, err := c.Do(ctx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "goblin.") {
			t.Fatalf("COMMAND LIST lists %s", n)
		}
	}
	info, err := c.Do(ctx, "COMMAND", "INFO", "goblin.apply").Slice()
	if err != nil || len(info) != 1 || info[0] != nil {
		t.Fatalf("COMMAND INFO goblin.apply: %v %v", info, err)
	}
}

// An insider's peer (it holds the secret) sends garbage as forwarded
// entries: each is refused before it is proposed, with an error, and the
// cluster goes on; a restarted node replays its log without trouble.
func TestGarbageEntriesThroughForwarding(t *testing.T) {
	secretFile := writeSecret(t)
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3, Args: []string{"--cluster-secret-file", secretFile}})
	leader := WaitLeader(t, nodes, 30*time.Second)
	secret, err := os.ReadFile(secretFile)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cluster.NewSecretCredentials("peer", [][]byte{[]byte(strings.TrimSpace(string(secret)))})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", leader.Raft, creds.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write([]byte("GOB\x01I")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	bad := [][]byte{{}, {0xff}, {raftfsm.Version, 200}, {raftfsm.Version, byte(raftfsm.OpNoop)}, {raftfsm.Version, byte(raftfsm.OpRules)}}
	for range 30 {
		b := make([]byte, 1+len(bad)%40)
		rand.Read(b)
		bad = append(bad, b)
	}
	// A decodable command entry for a command that does not exist.
	unknown := raftfsm.CommandEntry(0, 0, "NOSUCHCOMMAND", "k")
	bad = append(bad, unknown.Encode(nil))
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	for i, b := range bad {
		nc.Write(wire.AppendCommand(nil, []byte("GOBLIN.APPLY"), b))
		v, err := wire.ReadReply(br)
		if err != nil {
			t.Fatalf("entry %d (%x): no reply: %v", i, b, err)
		}
		if v.Kind != '-' {
			t.Fatalf("entry %d (%x) was accepted: %c%q", i, b, v.Kind, v.Str)
		}
	}
	// A good entry on the same connection is applied.
	good := zaddEntry("k", "m")
	nc.Write(wire.AppendCommand(nil, []byte("GOBLIN.APPLY"), good))
	if v, err := wire.ReadReply(br); err != nil || v.Kind != '*' || len(v.Array) != 2 {
		t.Fatalf("a good forwarded entry: %c%q %v", v.Kind, v.Str, err)
	}
	ctx := context.Background()
	for _, n := range nodes {
		testutil.Eventually(t, 10*time.Second, func() error {
			s, err := n.Client().ZScore(ctx, "k", "m").Result()
			if err != nil || s != 1 {
				return fmt.Errorf("%s: ZSCORE k m: %v %v", n.ID, s, err)
			}
			return nil
		})
	}
	f := Followers(nodes, leader)[0]
	f.Kill()
	f.Restart()
	f.WaitReady(30 * time.Second)
	if s, err := f.Client().ZScore(ctx, "k", "m").Result(); err != nil || s != 1 {
		t.Fatalf("after a restart: %v %v", s, err)
	}
}
