//go:build unix

package wire

import (
	"io"
	"syscall"
	"testing"
)

// In raw mode a read that came back short is followed by a wait, not a
// second read; a read that found nothing is followed by a wait too, and
// then by a read.
func TestRawReadWaitsAfterShortRead(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	send := func(s string) {
		if _, err := syscall.Write(fds[1], []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	f := NewFramer(nil)
	f.BeginRaw(fds[0])
	send("PING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n")
	cmds, err := f.ReadBatch(nil)
	if err != nil || len(cmds) != 2 || string(cmds[1][1]) != "x" {
		t.Fatalf("first batch: %q, %v", cmds, err)
	}
	// The short read emptied the socket: wait, without reading. What
	// arrives meanwhile is read after the wait.
	send("PING\r\n")
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock || !f.WaitedUnread() {
		t.Fatalf("after a short read: %v, waited unread %v", err, f.WaitedUnread())
	}
	if cmds, err := f.ReadBatch(nil); err != nil || len(cmds) != 1 {
		t.Fatalf("after the wait: %q, %v", cmds, err)
	}
	// A wake-up with nothing to read: the read finds nothing, and the
	// wait that follows comes after a read.
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock || !f.WaitedUnread() {
		t.Fatalf("second short read: %v", err)
	}
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock || f.WaitedUnread() {
		t.Fatalf("an empty socket: %v, waited unread %v", err, f.WaitedUnread())
	}
	// The end of the stream is read as such.
	send("PI")
	syscall.Shutdown(fds[1], syscall.SHUT_WR)
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock {
		t.Fatalf("a partial request: %v", err)
	}
	if _, err := f.ReadBatch(nil); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
	f.EndRaw()
	if f.rawFD != -1 || f.drained {
		t.Fatal("EndRaw kept raw state")
	}
}
