package cluster

import (
	"io"
	"log"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// startGossip runs memberlist named name on a bounded transport on a free
// loopback port.
func startGossip(t *testing.T, name string) (*memberlist.Memberlist, *boundedTransport) {
	t.Helper()
	bt, err := newBoundedTransport("127.0.0.1", 0, hclog.NewNullLogger(), log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	mc := memberlist.DefaultLANConfig()
	mc.Name = name
	mc.Transport = bt
	mc.BindAddr, mc.BindPort, mc.AdvertisePort = "127.0.0.1", bt.GetAutoBindPort(), bt.GetAutoBindPort()
	mc.LogOutput = io.Discard
	m, err := memberlist.Create(mc)
	if err != nil {
		bt.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return m, bt
}

// Streams to the gossip port that send nothing are bounded: beyond
// maxGossipStreamsPerHost from one host they are closed at once instead of
// held by memberlist for its TCPTimeout, nodes on another host still join
// through streams, and the places come back as the streams close.
func TestGossipStreamsBounded(t *testing.T) {
	m1, bt := startGossip(t, "a")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(bt.GetAutoBindPort()))
	idle := floodIdle(t, addr, 3*maxGossipStreamsPerHost)
	time.Sleep(200 * time.Millisecond)
	if n := bt.bound.count(); n > maxGossipStreamsPerHost {
		t.Fatalf("memberlist holds %d streams, bound %d", n, maxGossipStreamsPerHost)
	}
	if n := countClosed(idle, time.Second); n != len(idle)-maxGossipStreamsPerHost {
		t.Fatalf("%d of %d idle streams closed within a second, want %d", n, len(idle), len(idle)-maxGossipStreamsPerHost)
	}

	// A node on another host joins during the flood (a state exchange over
	// a stream).
	m2, _ := startGossip(t, "b")
	if _, err := m2.Join([]string{addr}); err != nil {
		t.Fatalf("joining during the flood: %v", err)
	}
	// The joiner's Join returns once it has the other's state; the other
	// merges the joiner's after answering.
	for deadline := time.Now().Add(5 * time.Second); m1.NumMembers() != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d members 5 s after the join, want 2", m1.NumMembers())
		}
	}

	for _, c := range idle {
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for bt.bound.count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams still counted after they closed", bt.bound.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
