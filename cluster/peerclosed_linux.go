package cluster

import (
	"net"
	"syscall"
)

// peerClosed reports whether the TCP connection c has nothing to be
// waited for: the peer closed it, it failed, or bytes wait unread. It
// looks without reading (MSG_PEEK) and without blocking.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = err != syscall.EAGAIN && err != syscall.EINTR
		return true
	})
	return closed || err != nil
}
