//go:build unix

package wire

import (
	"io"
	"sync/atomic"
	"syscall"
	"testing"
)

// In raw mode a read that came back short is followed by a wait, not a
// second read; a read that found nothing is followed by a wait too, and
// then by a read.
func TestRawReadWaitsAfterShortRead(t *testing.T) {
	fds := socketPair(t)
	send := func(s string) { sendTo(t, fds[1], s) }
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
	if f.fd != -1 || f.drained {
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
	fds := socketPair(t)
	f := NewFramer(nil)
	f.BeginRaw(fds[0])
	out, err := collectWaiting(t, f, 2*len(input)+4, func() {
		if input == "" {
			syscall.Shutdown(fds[1], syscall.SHUT_WR)
			return
		}
		k := min(n, len(input))
		sendTo(t, fds[1], input[:k])
		input = input[k:]
	})
	if err != nil && err != io.EOF {
		t.Fatalf("ReadBatch: %v", err)
	}
	return out
}

// A client whose next request is there whenever the Framer reads again
// (one sharing the server's CPU) is read without waits once a probe found
// it so, but for one wait every maxRun+1 requests; once reads after short
// reads find the socket empty, the Framer waits first again. With
// another client connection open it always waits first.
func TestRawReadGuessesReadFirst(t *testing.T) {
	fds := socketPair(t)
	send := func() { sendTo(t, fds[1], "PING\r\n") }
	var clients atomic.Int64
	clients.Store(1)
	f := NewFramer(nil)
	f.Clients = &clients
	f.BeginRaw(fds[0])
	send()
	if _, err := f.ReadBatch(nil); err != nil {
		t.Fatal(err)
	}
	// rounds sends the next request before each read, n times, and
	// returns the waits (each skipping a read) in order.
	rounds := func(n int) (waits []bool) {
		for range n {
			send()
			cmds, err := f.ReadBatch(nil)
			waited := err == ErrWouldBlock
			if waited {
				if !f.WaitedUnread() {
					t.Fatal("waited after a read, with a request to read")
				}
				cmds, err = f.ReadBatch(nil) // the wake-up
			}
			if err != nil || len(cmds) != 1 {
				t.Fatalf("%q, %v", cmds, err)
			}
			waits = append(waits, waited)
		}
		return waits
	}
	// Waits first until the probe, then reads first maxRun times in a
	// row between waits.
	w := rounds(probeEvery + 3*(maxRun+1))
	for i, waited := range w {
		want := i < probeEvery-1 || (i >= probeEvery && (i-probeEvery)%(maxRun+1) == maxRun)
		if waited != want {
			t.Fatalf("round %d: waited %v, want %v (waits %v)", i, waited, want, w)
		}
	}
	// Another client connection: waits first every time.
	clients.Store(2)
	for i, waited := range rounds(2 * (maxRun + 1)) {
		if !waited {
			t.Fatalf("round %d with two clients: read first", i)
		}
	}
	clients.Store(1)
	// Nothing sent: each read after a short read finds nothing, and the
	// score halves down to waiting first.
	empty := 0
	for {
		if _, err := f.ReadBatch(nil); err != ErrWouldBlock {
			t.Fatalf("nothing sent: %v", err)
		}
		if f.WaitedUnread() {
			break
		}
		if empty++; empty > 8 {
			t.Fatal("still reading first after reads that found nothing")
		}
		send()
		if cmds, err := f.ReadBatch(nil); err != nil || len(cmds) != 1 {
			t.Fatalf("after the wake-up: %q, %v", cmds, err)
		}
	}
	if empty < 2 {
		t.Fatalf("waited first after %d empty reads", empty)
	}
}

func TestReadGuess(t *testing.T) {
	var g readGuess
	for i := 1; i < probeEvery; i++ {
		if g.readFirst() {
			t.Fatalf("read first at guess %d with a zero score", i)
		}
	}
	if !g.readFirst() {
		t.Fatalf("no probe after %d guesses", probeEvery)
	}
	for range 3 * maxScore {
		g.found(true)
	}
	if g.score != maxScore {
		t.Fatalf("score %d, want the bound %d", g.score, maxScore)
	}
	for i := 1; i <= 3*(maxRun+1); i++ {
		if first := g.readFirst(); first != (i%(maxRun+1) != 0) {
			t.Fatalf("guess %d in a run of reads that found data: read first %v", i, first)
		}
		g.found(true)
	}
	n := 0
	for g.readFirst() {
		g.found(false)
		n++
	}
	if n != 5 { // 16, 8, 4, 2, 1
		t.Fatalf("read first %d times after empty reads, want 5", n)
	}
}

// collectWaiting is collect over f's batches in raw mode, calling feed
// (to send more, or the end of the stream) whenever f would wait, at most
// limit times.
func collectWaiting(t *testing.T, f *Framer, limit int, feed func()) (string, error) {
	waits := 0
	return collect(func() ([][][]byte, error) {
		for {
			cmds, err := f.ReadBatch(nil)
			if err != ErrWouldBlock {
				return cmds, err
			}
			if waits++; waits > limit {
				t.Fatal("still waiting after every byte was sent")
			}
			feed()
		}
	})
}

// socketPair returns a connected pair of non-blocking Unix stream
// sockets, closed when the test ends.
func socketPair(t *testing.T) [2]int {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return [2]int(fds)
}

// sendTo writes s to the socket fd.
func sendTo(t *testing.T, fd int, s string) {
	t.Helper()
	if _, err := syscall.Write(fd, []byte(s)); err != nil {
		t.Fatal(err)
	}
}
