package main

import (
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
