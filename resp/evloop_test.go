//go:build linux

package resp

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// loopServer serves a fake backend whose writes the event loop runs.
func loopServer(t *testing.T) (*Server, *fakeBackend) {
	t.Helper()
	// A test that fails prints the server's log and the loop's counters:
	// a connection the server closed says why there, if it says at all.
	var log logBuffer
	var s *Server
	t.Cleanup(func() {
		if t.Failed() && s != nil && s.loop != nil {
			t.Logf("the loop: %d batches, %d hand-offs, %d lent, %d yields; the server's log:\n%s",
				s.loop.batches.Load(), s.loop.handOffs.Load(), s.loop.lent.Load(), s.loop.yields.Load(), log.String())
		}
	})
	s, fb := startServer(t, Config{EventLoop: true, Logger: log.logger()})
	if s.loop == nil {
		t.Fatal("no event loop")
	}
	return s, fb
}

func TestEventLoopRunsPlainWrites(t *testing.T) {
	s, _ := loopServer(t)
	c := dial(t, s)
	for i := range 20 {
		if got := c.do("ZADD", "k", fmt.Sprint(i), fmt.Sprint("m", i)); got != ":1\r\n" {
			t.Fatalf("ZADD %d: %q", i, got)
		}
	}
	// A pipeline of writes, one batch.
	var b []byte
	for i := range 50 {
		b = append(b, encode("ZINCRBY", "k", "1", fmt.Sprint("m", i%20))...)
	}
	c.send(b)
	for i := range 50 {
		want := fmt.Sprintf("$%d\r\n%d\r\n", len(fmt.Sprint(i%20+1+i/20)), i%20+1+i/20)
		if got := c.read(); got != want {
			t.Fatalf("ZINCRBY %d: %q, want %q", i, got, want)
		}
	}
	if n := s.loop.batches.Load(); n != 21 {
		t.Fatalf("the loop ran %d batches, want 21", n)
	}
	if n := s.loop.handOffs.Load(); n != 0 {
		t.Fatalf("%d hand-offs", n)
	}
	// An invalid write after a valid one in the same batch would wait for
	// the first: the connection's goroutine runs the batch, replies in
	// order, and the connection goes back to the loop.
	c.send(append(encode("ZADD", "k", "1", "x"), encode("ZADD", "k", "notanumber", "y")...))
	if got := c.read(); got != ":1\r\n" {
		t.Fatalf("first of the mixed batch: %q", got)
	}
	if got := c.read(); !strings.HasPrefix(got, "-ERR value is not a valid float") {
		t.Fatalf("second of the mixed batch: %q", got)
	}
	if n := s.loop.lent.Load(); n != 1 {
		t.Fatalf("%d batches lent, want 1", n)
	}
	if got := c.do("ZSCORE", "k", "m0"); got != "$1\r\n3\r\n" {
		t.Fatalf("ZSCORE: %q", got)
	}
	if n := s.loop.batches.Load(); n != 22 {
		t.Fatalf("the loop ran %d batches, want 22", n)
	}
	// A transaction's batches run in its goroutine, which keeps the
	// connection while MULTI holds.
	c.send(append(encode("MULTI"), encode("ZADD", "k", "2", "x")...))
	if got := c.read(); got != "+OK\r\n" {
		t.Fatalf("MULTI: %q", got)
	}
	if got := c.read(); got != "+QUEUED\r\n" {
		t.Fatalf("queued ZADD: %q", got)
	}
	if n := s.loop.handOffs.Load(); n != 1 {
		t.Fatalf("%d hand-offs, want 1", n)
	}
	if got := c.do("EXEC"); got != "*1\r\n:0\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
}

func TestEventLoopLendsAReadAfterAWrite(t *testing.T) {
	s, _ := loopServer(t)
	c := dial(t, s)
	c.send(append(encode("ZADD", "k", "1", "a"), encode("ZADD", "k", "2", "b")...))
	c.read()
	c.read()
	// Write then read in one batch: the read sees the write.
	c.send(append(encode("ZADD", "k", "3", "c"), encode("ZCARD", "k")...))
	if got := c.read(); got != ":1\r\n" {
		t.Fatalf("ZADD: %q", got)
	}
	if got := c.read(); got != ":3\r\n" {
		t.Fatalf("ZCARD: %q", got)
	}
	if s.loop.lent.Load() != 1 || s.loop.handOffs.Load() != 0 {
		t.Fatalf("batches lent: %d, hand-offs: %d; want 1, 0", s.loop.lent.Load(), s.loop.handOffs.Load())
	}
}

// holdAnswers holds the answers of the writes proposed to fb from now on,
// until the channel returned is closed.
func holdAnswers(fb *fakeBackend) chan struct{} {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.hold = make(chan struct{})
	return fb.hold
}

// answerAtOnce has fb answer the writes proposed from now on at once.
func answerAtOnce(fb *fakeBackend) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.hold = nil
}

func TestEventLoopRequestsWhileWritesInFlight(t *testing.T) {
	s, fb := loopServer(t)
	c := dial(t, s)
	other := dial(t, s)
	hold := holdAnswers(fb)
	c.send(encode("ZADD", "k", "1", "a"))
	time.Sleep(50 * time.Millisecond)
	// The next request arrives while the first write is in flight, and
	// another connection's too.
	c.send(encode("ZADD", "k", "2", "b"))
	other.send(encode("ZADD", "k", "3", "c"))
	time.Sleep(50 * time.Millisecond)
	answerAtOnce(fb)
	close(hold)
	if got := c.read(); got != ":1\r\n" {
		t.Fatalf("first: %q", got)
	}
	if got := c.read(); got != ":1\r\n" {
		t.Fatalf("second: %q", got)
	}
	if got := other.read(); got != ":1\r\n" {
		t.Fatalf("other: %q", got)
	}
	if got := c.do("ZCARD", "k"); got != ":3\r\n" {
		t.Fatalf("ZCARD: %q", got)
	}
}

// A connection whose write is held (a full disk, a leadership change)
// holds back no other connection's answers.
func TestEventLoopWriteHeldHoldsBackNoOther(t *testing.T) {
	s, fb := loopServer(t)
	c := dial(t, s)
	other := dial(t, s)
	defer close(holdAnswers(fb))
	c.send(encode("ZADD", "k", "1", "a"))
	time.Sleep(50 * time.Millisecond)
	answerAtOnce(fb)
	for i := range 3 {
		if got := other.do("ZADD", "k", fmt.Sprint(i), fmt.Sprint("b", i)); got != ":1\r\n" {
			t.Fatalf("the other connection's ZADD %d: %q", i, got)
		}
	}
	// The fake applies a held write at once; only its answer waits.
	if got := other.do("ZCARD", "k"); got != ":4\r\n" {
		t.Fatalf("ZCARD: %q", got)
	}
	if s.loop.batches.Load() < 3 {
		t.Fatalf("the loop ran %d batches, want the other connection's", s.loop.batches.Load())
	}
}

func TestEventLoopClientKill(t *testing.T) {
	s, _ := loopServer(t)
	c := dial(t, s)
	c.do("ZADD", "k", "1", "a")
	admin := dial(t, s)
	id := strings.TrimSpace(strings.TrimPrefix(admin.do("CLIENT", "LIST"), "$"))
	// The first client listed is c (the lowest id).
	i := strings.Index(id, "id=")
	var cid int
	fmt.Sscanf(id[i:], "id=%d", &cid)
	if got := admin.do("CLIENT", "KILL", "ID", fmt.Sprint(cid)); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL: %q", got)
	}
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.rd.ReadByte(); err != io.EOF {
		t.Fatalf("the killed connection reads %v, want EOF", err)
	}
}

func TestEventLoopHalfClose(t *testing.T) {
	s, _ := loopServer(t)
	c := dial(t, s)
	c.send(append(encode("ZADD", "k", "1", "a"), encode("ZADD", "k", "2", "b")...))
	c.c.(interface{ CloseWrite() error }).CloseWrite()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c.c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != ":1\r\n:1\r\n" {
		t.Fatalf("replies before the end: %q", got)
	}
}

// A reply the socket does not take at once goes to the connection's
// goroutine, which writes the rest.
func TestEventLoopLargeReplyHandsOver(t *testing.T) {
	s, _ := loopServer(t)
	c := dial(t, s)
	// A reply larger than a loopback socket's largest send buffer (4 MiB).
	const n = 200000
	for lo := 0; lo < n; lo += 1000 {
		args := []string{"ZADD", "k"}
		for i := lo; i < lo+1000; i++ {
			args = append(args, fmt.Sprint(i), fmt.Sprintf("member-%08d", i))
		}
		c.do(args...)
	}
	c.send(encode("ZPOPMIN", "k", fmt.Sprint(n)))
	time.Sleep(100 * time.Millisecond) // the loop writes what the socket takes
	c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	head, err := c.rd.ReadString('\n')
	if err != nil || head != fmt.Sprintf("*%d\r\n", 2*n) {
		t.Fatalf("ZPOPMIN header %q, %v", head, err)
	}
	line := func() string {
		l, err := c.rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(l, "\r\n")
	}
	for i := range n {
		line()
		m := line()
		line()
		sc := line()
		if m != fmt.Sprintf("member-%08d", i) || sc != fmt.Sprint(i) {
			t.Fatalf("pair %d: %s %s", i, m, sc)
		}
	}
	if s.loop.handOffs.Load() != 1 {
		t.Fatalf("hand-offs: %d, want 1", s.loop.handOffs.Load())
	}
	if got := c.do("ZCARD", "k"); got != ":0\r\n" {
		t.Fatalf("ZCARD: %q", got)
	}
}

func TestEventLoopServerClose(t *testing.T) {
	s, _ := loopServer(t)
	c := dial(t, s)
	c.do("ZADD", "k", "1", "a")
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.rd.ReadByte(); err != io.EOF {
		t.Fatalf("a connection of a closed server reads %v, want EOF", err)
	}
	<-done
}

// A connection that keeps the loop busy (a long pipeline of reads, its
// replies read as they come) has turns, and the others are served
// between them; all its replies come, in order.
func TestEventLoopTurns(t *testing.T) {
	// A turn of one batch: whatever follows a batch waits for the next
	// round.
	turn := loopTurn
	t.Cleanup(func() { loopTurn = turn })
	loopTurn = 1
	s, _ := loopServer(t)
	c, other := dial(t, s), dial(t, s)
	c.do("ZADD", "k", "1", "a", "2", "b")
	const n = 100000
	var b []byte
	for i := range n {
		b = append(b, encode("ZSCORE", "k", []string{"a", "b"}[i%2])...)
	}
	read := make(chan error, 1)
	go func() {
		c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := range n {
			want := []string{"$1\r\n1\r\n", "$1\r\n2\r\n"}[i%2]
			var got strings.Builder
			for range 2 {
				l, err := c.rd.ReadString('\n')
				if err != nil {
					read <- fmt.Errorf("reply %d: %v", i, err)
					return
				}
				got.WriteString(l)
			}
			if got.String() != want {
				read <- fmt.Errorf("reply %d: %q, want %q", i, got.String(), want)
				return
			}
		}
		read <- nil
	}()
	go c.c.Write(b)
	if got := other.do("ZADD", "o", "1", "x"); got != ":1\r\n" {
		t.Fatalf("the other connection's ZADD: %q", got)
	}
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	if s.loop.yields.Load() == 0 {
		t.Fatalf("a pipeline of %d reads never yielded its turn (%d hand-offs)", n, s.loop.handOffs.Load())
	}
}

// setBarrier has fb's linearizable reads need a read barrier, held until
// the channel returned is closed.
func setBarrier(fb *fakeBackend) chan struct{} {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.barrierReads = true
	fb.barrierHold = make(chan struct{})
	return fb.barrierHold
}

func (f *fakeBackend) barrierCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.barriers
}

// waitNeedBarrier waits until fb was asked n times whether a
// linearizable read runs without a barrier.
func (f *fakeBackend) waitNeedBarrier(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		got := f.needBarrier
		f.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reads asked for a barrier, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Linearizable reads that need a read barrier (a follower's) stay in the
// loop: none is answered before a barrier taken after it arrived has
// passed, the reads of many connections share barriers, and none is lent
// to its connection's goroutine.
func TestEventLoopReadsShareABarrier(t *testing.T) {
	s, fb := loopServer(t)
	setup := dial(t, s)
	setup.do("ZADD", "k", "1", "a", "2", "b")
	hold := setBarrier(fb)
	const n = 8
	cs := make([]*conn, n)
	for i := range cs {
		cs[i] = dial(t, s)
		cs[i].send(encode("ZSCORE", "k", []string{"a", "b"}[i%2]))
	}
	// Every connection's read waits, the first barrier held: no reply
	// may come.
	fb.waitNeedBarrier(t, n)
	for deadline := time.Now().Add(5 * time.Second); fb.barrierCount() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no read barrier taken for the reads waiting")
		}
	}
	cs[0].c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if b, err := cs[0].rd.ReadByte(); err == nil {
		t.Fatalf("a reply (%q...) before the read barrier passed", b)
	}
	close(hold)
	for i, c := range cs {
		want := []string{"$1\r\n1\r\n", "$1\r\n2\r\n"}[i%2]
		if got := c.read(); got != want {
			t.Fatalf("connection %d: ZSCORE %q, want %q", i, got, want)
		}
	}
	// The reads that arrived while the first barrier was held shared the
	// second; a pipeline's batch takes one more.
	if b := fb.barrierCount(); b > 2 {
		t.Fatalf("%d read barriers for %d connections' reads, want at most 2", b, n)
	}
	cs[0].send(append(encode("ZSCORE", "k", "a"), encode("ZCARD", "k")...))
	if got := cs[0].read() + cs[0].read(); got != "$1\r\n1\r\n:2\r\n" {
		t.Fatalf("pipelined reads: %q", got)
	}
	if l, h := s.loop.lent.Load(), s.loop.handOffs.Load(); l != 0 || h != 0 {
		t.Fatalf("batches lent: %d, hand-offs: %d; want none", l, h)
	}
	// A barrier that fails: the batch goes to its goroutine, which takes
	// its own and answers with the error.
	fb.mu.Lock()
	fb.err = errors.New("ERR no leader")
	fb.mu.Unlock()
	if got := cs[1].do("ZSCORE", "k", "a"); !strings.HasPrefix(got, "-") {
		t.Fatalf("ZSCORE with the barrier failing: %q, want an error", got)
	}
	if l := s.loop.lent.Load(); l != 1 {
		t.Fatalf("batches lent after a failed barrier: %d, want 1", l)
	}
	fb.mu.Lock()
	fb.err = nil
	fb.mu.Unlock()
	if got := cs[1].do("ZSCORE", "k", "b"); got != "$1\r\n2\r\n" {
		t.Fatalf("ZSCORE after the barrier recovered: %q", got)
	}
}
