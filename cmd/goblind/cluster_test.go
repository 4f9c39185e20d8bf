package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Cluster mode derives every advertised address from --advertise, and
// refuses to guess one when --addr listens on all interfaces.
func TestClusterFlags(t *testing.T) {
	o, err := parseFlags([]string{"--addr", "127.0.0.1:6381", "--join", "127.0.0.1:26381, 127.0.0.1:26382", "--bootstrap-expect", "3"})
	if err != nil {
		t.Fatal(err)
	}
	c := o.cluster
	if !c.enabled || len(c.seeds) != 2 || c.seeds[1] != "127.0.0.1:26382" {
		t.Fatalf("seeds %v enabled %v", c.seeds, c.enabled)
	}
	if o.raftAddr != "127.0.0.1:16381" || o.raftAdvertise != "127.0.0.1:16381" || c.gossipAddr != "127.0.0.1:26381" || c.respAdv != "127.0.0.1:6381" || o.id != "127.0.0.1:16381" {
		t.Fatalf("derived addresses: raft %s/%s gossip %s resp %s id %s", o.raftAddr, o.raftAdvertise, c.gossipAddr, c.respAdv, o.id)
	}

	if _, err := parseFlags([]string{"--addr", "0.0.0.0:6379", "--bootstrap-expect", "3"}); err == nil || !strings.Contains(err.Error(), "--advertise") {
		t.Fatalf("all-interfaces --addr without --advertise: %v", err)
	}

	t.Setenv("GOBLIN_ADVERTISE", "goblin1")
	t.Setenv("GOBLIN_ANNOUNCE", "127.0.0.1:6381")
	t.Setenv("GOBLIN_GOSSIP_ADDR", "0.0.0.0:7946")
	t.Setenv("GOBLIN_JOIN", "goblin1:7946,goblin2:7946")
	o, err = parseFlags([]string{"--addr", "0.0.0.0:6379", "--raft-addr", "0.0.0.0:16379"})
	if err != nil {
		t.Fatal(err)
	}
	c = o.cluster
	if c.respAdv != "goblin1:6379" || o.raftAdvertise != "goblin1:16379" || c.gossipAdv != "goblin1:7946" || c.clientAddr != "127.0.0.1:6381" {
		t.Fatalf("from the environment: resp %s raft %s gossip %s announce %s", c.respAdv, o.raftAdvertise, c.gossipAdv, c.clientAddr)
	}

	o, err = parseFlags(nil)
	if err != nil || !o.cluster.enabled {
		t.Fatalf("GOBLIN_JOIN alone enables cluster mode: %v", err)
	}
}

// A RESP port whose default Raft or gossip port (port+10000, port+20000)
// would pass 65535 is refused with the flag to set, before anything starts.
func TestDerivedPortsInRange(t *testing.T) {
	if _, err := parseFlags([]string{"--addr", "127.0.0.1:58471"}); err == nil || !strings.Contains(err.Error(), "set --raft-addr") {
		t.Fatalf("--addr port 58471 without --raft-addr: %v", err)
	}
	o, err := parseFlags([]string{"--addr", "127.0.0.1:58471", "--raft-addr", "127.0.0.1:7000"})
	if err != nil || o.raftAddr != "127.0.0.1:7000" {
		t.Fatalf("--raft-addr given: %v %v", o, err)
	}
	if _, err := parseFlags([]string{"--addr", "127.0.0.1:50000", "--join", "127.0.0.1:26381"}); err == nil || !strings.Contains(err.Error(), "set --gossip-addr") {
		t.Fatalf("--addr port 50000 in a cluster without --gossip-addr: %v", err)
	}
	if o, err := parseFlags([]string{"--addr", "127.0.0.1:55535"}); err != nil || o.raftAddr != "127.0.0.1:65535" {
		t.Fatalf("--addr port 55535: %v", err)
	}
}

// GOBLIN_<FLAG>_FILE gives a flag its value from a file (Docker secrets),
// except for flags that have a -file variant of their own.
func TestEnvFileValues(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOBLIN_REQUIREPASS_FILE", pw)
	o, err := parseFlags(nil)
	if err != nil || o.requirePass != "s3cret" {
		t.Fatalf("GOBLIN_REQUIREPASS_FILE: %q %v", o.requirePass, err)
	}
	t.Setenv("GOBLIN_REQUIREPASS", "fromenv")
	if o, err := parseFlags(nil); err != nil || o.requirePass != "fromenv" {
		t.Fatalf("GOBLIN_REQUIREPASS beside _FILE: %q %v", o.requirePass, err)
	}
	if o, err := parseFlags([]string{"--requirepass", "flag"}); err != nil || o.requirePass != "flag" {
		t.Fatalf("the flag beside the environment: %q %v", o.requirePass, err)
	}
	t.Setenv("GOBLIN_CLUSTER_SECRET_FILE", pw)
	if o, err := parseFlags(nil); err != nil || o.plane.secretFile != pw {
		t.Fatalf("GOBLIN_CLUSTER_SECRET_FILE is --cluster-secret-file: %q %v", o.plane.secretFile, err)
	}
	t.Setenv("GOBLIN_LOG_LEVEL_FILE", filepath.Join(dir, "missing"))
	if _, err := parseFlags(nil); err == nil || !strings.Contains(err.Error(), "GOBLIN_LOG_LEVEL") {
		t.Fatalf("a missing _FILE: %v", err)
	}
}

// Without credentials every node-to-node address must be loopback; with
// a secret any address goes; certificate files off loopback need a gossip
// key; half-given or conflicting credentials are refused.
func TestProtectedMode(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte(strings.Repeat("k", 40)+"\n"), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("hunter2\n"), 0o600)
	cases := []struct {
		args []string
		want string // "" for no error
	}{
		{[]string{"--addr", "127.0.0.1:6381", "--bootstrap-expect", "3"}, ""},
		{[]string{"--addr", "0.0.0.0:6381", "--advertise", "10.0.0.1", "--bootstrap-expect", "3"}, "--cluster-secret-file"},
		{[]string{"--addr", "127.0.0.1:6381", "--raft-addr", "0.0.0.0:16381", "--bootstrap-expect", "3"}, "(--raft-addr 0.0.0.0:16381)"},
		{[]string{"--addr", "0.0.0.0:6381", "--advertise", "10.0.0.1", "--bootstrap-expect", "3", "--cluster-secret-file", secret}, ""},
		{[]string{"--addr", "0.0.0.0:6381", "--advertise", "10.0.0.1", "--bootstrap-expect", "3", "--cluster-secret-file", short}, "too short"},
		{[]string{"--addr", "0.0.0.0:6381", "--advertise", "10.0.0.1", "--bootstrap-expect", "3", "--cluster-tls-cert-file", "x"}, "go together"},
		{[]string{"--addr", "0.0.0.0:6381", "--advertise", "10.0.0.1", "--bootstrap-expect", "3", "--cluster-secret-file", secret, "--cluster-tls-cert-file", "a", "--cluster-tls-key-file", "b", "--cluster-tls-ca-file", "c"}, "not both"},
		{[]string{"--addr", "0.0.0.0:6381"}, ""}, // a single node opens no Raft port
	}
	for _, tc := range cases {
		o, err := parseFlags(tc.args)
		if err == nil {
			_, err = o.plane.load(o.id, o.cluster.planeAddrs(o))
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one with %q", tc.args, err, tc.want)
		}
	}
}
