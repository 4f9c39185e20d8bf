package resp

import (
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

// TestCloseNeverServed: Close returns for a server that never listened,
// one that listened but never served, and one closed before Serve.
func TestCloseNeverServed(t *testing.T) {
	cfg := Config{Addr: "127.0.0.1:0", UnixSocket: filepath.Join(t.TempDir(), "s.sock")}
	closeWithin(t, NewServer(cfg, newFakeBackend()), 10*time.Second)
	s := NewServer(cfg, newFakeBackend())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	closeWithin(t, s, 10*time.Second)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the listener of a closed server that never served accepts connections")
	}
	s.Serve() // after Close: serves nothing
	closeWithin(t, s, 10*time.Second)
}

// TestCloseListenerClosedUnderIt: when a listener is closed under the
// server (it failed), its connections end and Close still returns.
func TestCloseListenerClosedUnderIt(t *testing.T) {
	s := NewServer(Config{Addr: "127.0.0.1:0"}, newFakeBackend())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	c := dial(t, s)
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	s.tcpLn.Close()
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(c.rd); err != nil {
		t.Errorf("the connection outlived its listener: %v", err)
	}
	closeWithin(t, s, 10*time.Second)
}

// failingListener's Accept fails with err, then (once ok is set) hands
// over the connections of the listener it wraps; Close does not stop
// the failures when err is not net.ErrClosed.
type failingListener struct {
	net.Listener
	err     error
	ok      atomic.Bool
	accepts atomic.Int64
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.accepts.Add(1)
	if !l.ok.Load() {
		return nil, l.err
	}
	return l.Listener.Accept()
}

// TestAcceptErrors: a listener that fails (out of file descriptors, say)
// is retried with a backoff, serves again once it recovers, and a server
// whose listener never stops failing still closes.
func TestAcceptErrors(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: errors.New("too many open files")}
	s := NewServer(Config{Addr: "127.0.0.1:0"}, newFakeBackend())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: s.tcpLn, err: emfile}
	s.listeners, s.tcpLn = []net.Listener{fl}, fl
	s.Serve()
	time.Sleep(200 * time.Millisecond)
	if n := fl.accepts.Load(); n < 2 || n > 200*time.Millisecond.Milliseconds()/acceptBackoff.Milliseconds()+5 {
		t.Errorf("%d accepts in 200 ms of failures, want a retry every %v", n, acceptBackoff)
	}
	fl.ok.Store(true)
	if got := dial(t, s).do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after the listener recovered = %q", got)
	}
	closeWithin(t, s, 10*time.Second)

	// A listener that fails for good, and not with net.ErrClosed.
	s = NewServer(Config{Addr: "127.0.0.1:0"}, newFakeBackend())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.tcpLn.Close()
	fl = &failingListener{Listener: s.tcpLn, err: emfile}
	s.listeners, s.tcpLn = []net.Listener{fl}, fl
	s.Serve()
	for fl.accepts.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	closeWithin(t, s, 10*time.Second)

	// The same, closed before redcon may have started serving it.
	for range 50 {
		s := NewServer(Config{}, newFakeBackend())
		s.listeners = []net.Listener{&failingListener{Listener: fl.Listener, err: emfile}}
		s.Serve()
		closeWithin(t, s, 10*time.Second)
	}
}

// gatedBackend holds every Propose until release is closed.
type gatedBackend struct {
	*fakeBackend
	started chan struct{}
	release chan struct{}
}

func (g *gatedBackend) Propose(e *raftfsm.Entry) func() (raftfsm.Result, error) {
	wait := g.fakeBackend.Propose(e)
	return func() (raftfsm.Result, error) {
		g.started <- struct{}{}
		<-g.release
		return wait()
	}
}

// TestCloseDrains: Close lets a command in flight finish and answer,
// refuses the connections made meanwhile, then closes every connection.
func TestCloseDrains(t *testing.T) {
	g := &gatedBackend{fakeBackend: newFakeBackend(), started: make(chan struct{}, 1), release: make(chan struct{})}
	s := NewServer(Config{Addr: "127.0.0.1:0"}, g)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	busy, idle := dial(t, s), dial(t, s)
	if got := idle.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	busy.send(encode("ZADD", "k", "1", "m"))
	<-g.started
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	<-s.closing
	late, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err == nil {
		late.SetReadDeadline(time.Now().Add(5 * time.Second))
		if b, err := io.ReadAll(late); err != nil || len(b) > 0 {
			t.Errorf("a connection made while closing read %q, %v; want a close", b, err)
		}
		late.Close()
	}
	select {
	case <-closed:
		t.Fatal("Close returned with a command in flight")
	default:
	}
	close(g.release)
	if got := busy.read(); got != ":1\r\n" {
		t.Errorf("the command in flight answered %q", got)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	idle.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(idle.rd); err != nil {
		t.Errorf("an idle connection outlived Close: %v", err)
	}
}

// A closing server answers the commands in flight but runs nothing new:
// a connection that sends a command once Close has begun is closed
// without running it, so its client goes on at another node instead of
// waiting on one that is leaving.
func TestCloseRunsNothingNew(t *testing.T) {
	s, f := startServer(t, Config{})
	a, b := dial(t, s), dial(t, s)
	if got := b.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	// The PING's batch stays counted until its reply is written, which
	// may be just after the client read it: wait for it to go, so that
	// the count below is the write's.
	testutil.Poll(t, 5*time.Second, "the PING's batch to end", func() bool { return s.active.Load() == 0 })
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	a.send(encode("ZADD", "k", "1", "x"))
	testutil.Poll(t, 5*time.Second, "the write to be in flight", func() bool { return s.active.Load() == 1 })
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	<-s.closing
	b.send(encode("ZADD", "k", "2", "y"))
	b.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := b.rd.Read(make([]byte, 64)); err != io.EOF {
		t.Fatalf("a command sent once Close began: read %d bytes, %v; want the connection closed", n, err)
	}
	close(hold)
	if got := a.read(); got != ":1\r\n" {
		t.Fatalf("the write in flight = %q", got)
	}
	<-closed
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.entries) != 1 {
		t.Fatalf("%d entries proposed, want only the one in flight", len(f.entries))
	}
}
