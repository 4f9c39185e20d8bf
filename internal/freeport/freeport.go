// Package freeport finds loopback addresses for tests that start real
// servers: a port free for both TCP and UDP (gossip binds both), never
// handed out twice on the machine while the process it was handed to
// lives. A test often asks for a node's RESP, Raft and gossip ports before
// any of them is bound, and restarts a node on its ports after it was
// killed, so the ports come from below the kernel's ephemeral range
// (32768 and up on Linux), where no outgoing connection or ":0" listener
// can take one meanwhile; and each port handed out is claimed for the
// process (claim.go), so that the test processes go test runs side by
// side (one a package) cannot hand out the same one while its node is
// down.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// The range ports are drawn from.
const (
	lowPort  = 10000
	highPort = 32767
)

var (
	mu     sync.Mutex
	handed = map[int]bool{}
)

// Addr returns host:port with a port that was free for TCP and UDP a
// moment ago, that Addr has not returned before and that no other live
// process claimed. host defaults to 127.0.0.1.
func Addr(host string) (string, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	for range 1000 {
		port := lowPort + rand.IntN(highPort-lowPort+1)
		mu.Lock()
		dup := handed[port]
		mu.Unlock()
		if dup || !claim(port) {
			continue
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		udp, uerr := net.ListenPacket("udp", addr)
		ln.Close()
		if uerr != nil {
			continue
		}
		udp.Close()
		mu.Lock()
		dup = handed[port]
		handed[port] = true
		mu.Unlock()
		if !dup {
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free port on %s after 1000 tries", host)
}
