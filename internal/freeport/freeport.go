// Package freeport finds loopback addresses for tests that start real
// servers: a port free for both TCP and UDP (gossip binds both), never
// handed out twice in one process. The kernel may give a just-closed port
// to the next caller, and a test often asks for a node's RESP, Raft and
// gossip ports before any of them is bound.
package freeport

import (
	"fmt"
	"net"
	"sync"
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
	for range 100 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return "", fmt.Errorf("finding a free port: %w", err)
		}
		addr := ln.Addr().String()
		port := ln.Addr().(*net.TCPAddr).Port
		udp, uerr := net.ListenPacket("udp", addr)
		ln.Close()
		if uerr != nil {
			continue
		}
		udp.Close()
		mu.Lock()
		dup := handed[port]
		handed[port] = true
		mu.Unlock()
		if !dup {
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free port on %s after 100 tries", host)
}
