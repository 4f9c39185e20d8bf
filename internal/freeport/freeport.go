// Package freeport finds loopback addresses for tests that start real
// servers: a port free for both TCP and UDP (gossip binds both), never
// handed out twice in one process. A test often asks for a node's RESP,
// Raft and gossip ports before any of them is bound, so the ports come
// from below the kernel's ephemeral range (32768 and up on Linux): there
// no outgoing connection or ":0" listener can take one meanwhile.
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
// moment ago and that Addr has not returned before. host defaults to
// 127.0.0.1.
func Addr(host string) (string, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	for range 1000 {
		port := lowPort + rand.IntN(highPort-lowPort+1)
		mu.Lock()
		dup := handed[port]
		mu.Unlock()
		if dup {
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
