package resp

import (
	"net"
	"syscall"
)

// socketFD returns the file descriptor of a connection's socket, as
// CLIENT LIST shows it, without duplicating it; -1 when the connection
// has none.
func socketFD(nc net.Conn) int {
	for {
		switch c := nc.(type) {
		case *framedConn:
			nc = c.raw
			continue
		case interface{ NetConn() net.Conn }: // TLS
			nc = c.NetConn()
			continue
		}
		break
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(f uintptr) { fd = int(f) }) != nil {
		return -1
	}
	return fd
}
