//go:build unix

package wire

import (
	"io"
	"os"
	"syscall"
)

// RawReads reports whether this system's Framer can read from a socket's
// descriptor (BeginRaw).
const RawReads = true

// readFD reads once from a non-blocking descriptor: again when it holds
// nothing yet, io.EOF at its end.
func readFD(fd int, p []byte) (n int, again bool, err error) {
	for {
		n, err = syscall.Read(fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, true, nil
		case err != nil:
			return 0, false, os.NewSyscallError("read", err)
		case n == 0:
			return 0, false, io.EOF
		}
		return n, false, nil
	}
}
