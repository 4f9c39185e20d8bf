package cluster

import (
	"bytes"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// A rejoining node's refutation of its own earlier self is information;
// of another node's message, a warning. A send on the socket this node
// closed as it stopped is not logged at info.
func TestGossipLogRefutations(t *testing.T) {
	var out bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &out})
	var leaving atomic.Bool
	w := newGossipLog(log.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}), "n3", &leaving)
	w.setAddr(hostPort(net.IPv4(10, 0, 0, 3), 7946))
	for _, line := range []string{
		"[WARN] memberlist: Refuting a dead message (from: n3)",
		"[WARN] memberlist: Refuting a suspect message (from: n3)",
		"[WARN] memberlist: Refuting an alive message for 'n3' (10.0.0.3:7946) meta:([1] VS [2]), vsn:([1] VS [1])",
		"[WARN] memberlist: Refuting a suspect message (from: n1)",
		"[WARN] memberlist: Refuting a dead message (from: n33)",
		"[WARN] memberlist: Refuting an alive message for 'n3' (10.0.0.9:7946) meta:([1] VS [2]), vsn:([1] VS [1])",
		"[ERR] memberlist: Failed to send gossip to 10.0.0.1:7946: write udp 10.0.0.3:7946->10.0.0.1:7946: use of closed network connection",
		"[ERR] memberlist: Failed to send ack: write udp 10.0.0.3:7946->10.0.0.1:7946: use of closed network connection from=10.0.0.1:7946",
		"[ERR] memberlist: Failed to send gossip to 10.0.0.1:7946: write udp 10.0.0.3:7946->10.0.0.1:7946: connection refused",
	} {
		w.Write([]byte(line + "\n"))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"[INFO]", "[INFO]", "[INFO]", "[WARN]", "[WARN]", "[WARN]", "[ERROR]"}
	if len(lines) != len(want) {
		t.Fatalf("logged:\n%s", out.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, want[i]) {
			t.Errorf("line %d: want %s, got %s", i, want[i], l)
		}
	}
}

// Once the node is leaving, memberlist's warnings about its peers (which
// are stopping with it) are information, and so are its errors about a
// peer that refused a connection (it stopped); its other errors stay
// errors, and before it leaves the same lines keep their levels.
func TestGossipLogWhileLeaving(t *testing.T) {
	var out bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &out})
	var leaving atomic.Bool
	w := newGossipLog(log.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}), "n2", &leaving)
	probe := "[WARN] memberlist: Was able to connect to n3 over TCP but UDP probes failed, network may be misconfigured\n"
	refused := "[ERR] memberlist: Push/Pull with n3 failed: dial tcp 127.0.0.1:15381: connect: connection refused\n"
	w.Write([]byte(probe))
	w.Write([]byte(refused))
	leaving.Store(true)
	w.Write([]byte(probe))
	w.Write([]byte(refused))
	w.Write([]byte("[ERR] memberlist: Failed to send gossip to 10.0.0.1:7946: write udp 10.0.0.3:7946->10.0.0.1:7946: connection refused\n"))
	w.Write([]byte("[ERR] memberlist: Failed to send gossip to 10.0.0.1:7946: write udp 10.0.0.3:7946->10.0.0.1:7946: sendto: no buffer space available\n"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"[WARN]", "[ERROR]", "[INFO]", "[INFO]", "[INFO]", "[ERROR]"}
	if len(lines) != len(want) {
		t.Fatalf("logged:\n%s", out.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, want[i]) {
			t.Errorf("line %d: want %s, got %s", i, want[i], l)
		}
	}
}
