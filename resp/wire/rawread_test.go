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

// FuzzRawFramer: in raw mode, whatever the bytes and however they arrive
// (chunks of a fuzzed size, each sent only once the Framer waits for the
// socket), ReadBatch returns the requests and the protocol error that it
// returns for the input in one read from a net.Conn.
func FuzzRawFramer(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n*0\r\n*-1\r\n",
		"PING\r\necho \"a b\"\n\r\n  \n",
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r",
		"*1\r\n$01\r\n",
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint8) {
		if len(in) > 4096 {
			return
		}
		n := int(size)%32 + 1
		if got, whole := frameRaw(t, string(in), n), frame(string(in), 1<<20, false); got != whole {
			t.Fatalf("raw mode, chunks of %d bytes: %q\none read: %q", n, got, whole)
		}
	})
}

// frameRaw runs input through ReadBatch in raw mode over a socket pair,
// sending the next chunk of n bytes (or the end of the stream) whenever
// the Framer would wait, and returns what frame returns.
func frameRaw(t *testing.T, input string, n int) string {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	f := NewFramer(nil)
	f.BeginRaw(fds[0])
	limit, waits := 2*len(input)+4, 0
	out, err := collect(func() ([][][]byte, error) {
		for {
			cmds, err := f.ReadBatch(nil)
			if err != ErrWouldBlock {
				return cmds, err
			}
			if waits++; waits > limit {
				t.Fatal("still waiting after every byte was sent")
			}
			if input == "" {
				syscall.Shutdown(fds[1], syscall.SHUT_WR)
				continue
			}
			k := min(n, len(input))
			if _, err := syscall.Write(fds[1], []byte(input[:k])); err != nil {
				t.Fatal(err)
			}
			input = input[k:]
		}
	})
	if err != nil && err != io.EOF {
		t.Fatalf("ReadBatch: %v", err)
	}
	return out
}
