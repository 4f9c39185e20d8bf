package resp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
	"github.com/goblindb/goblin/resp/wire"
)

// fakeBackend applies entries directly with a raftfsm.Applier: the whole
// state machine without Raft, so the edge can be tested alone.
type fakeBackend struct {
	mu      sync.Mutex
	a       *raftfsm.Applier
	index   uint64
	now     int64
	err     error // returned by Propose and ReadBarrier when set
	entries []*raftfsm.Entry
	// clustered: Status reports cluster mode.
	clustered bool
	// hold, when set, holds the answers of the writes proposed until it
	// is closed.
	hold chan struct{}
	// noLoop: writes are not run in the event loop (ProposesNow).
	noLoop bool
	// barrierReads: linearizable reads need a read barrier (ReadsNow
	// reports false for them, counted in needBarrier), as on a follower;
	// barriers counts the ReadBarrier calls, which wait for barrierHold
	// to be closed when it is set.
	barrierReads          bool
	needBarrier, barriers int
	barrierHold           chan struct{}
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{a: raftfsm.NewApplier(keyspace.New()), now: 1_700_000_000_000}
}

func (f *fakeBackend) Propose(e *raftfsm.Entry) func() (raftfsm.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		err := f.err
		return func() (raftfsm.Result, error) { return raftfsm.Result{}, err }
	}
	// Round-trip through the log encoding, as a real node does.
	d, err := raftfsm.Decode(e.Encode(nil))
	if err != nil {
		panic(err)
	}
	f.entries = append(f.entries, d)
	f.index++
	f.a.KS.Lock()
	reply := f.a.Apply(f.index, d)
	f.a.KS.Unlock()
	res := raftfsm.Result{Index: f.index, Reply: reply}
	hold := f.hold
	return func() (raftfsm.Result, error) {
		if hold != nil {
			<-hold
		}
		return res, nil
	}
}

// ProposesNow: the fake applies in Propose, so the event loop runs its
// writes (evloop_linux.go), unless noLoop.
func (f *fakeBackend) ProposesNow() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.noLoop
}

func (f *fakeBackend) ProposeTogether(fn func()) { fn() }

func (f *fakeBackend) ReadsNow(local bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.barrierReads && !local {
		f.needBarrier++
		return false
	}
	return !f.noLoop && f.err == nil
}

func (f *fakeBackend) ReadBarrier(ctx context.Context, local bool) error {
	f.mu.Lock()
	f.barriers++
	hold := f.barrierHold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeBackend) View(fn func(ks *keyspace.Keyspace, now int64)) {
	f.a.KS.RLock()
	defer f.a.KS.RUnlock()
	fn(f.a.KS, f.now)
}

func (f *fakeBackend) ReadView() (*keyspace.Keyspace, int64) {
	f.a.KS.RLock()
	return f.a.KS, f.now
}

func (f *fakeBackend) Now() int64 { return f.now }

func (f *fakeBackend) AppliedIndex() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.index
}

// WaitApplied: the fake applies every entry before Propose's wait
// returns, so an index it answered is applied.
func (f *fakeBackend) WaitApplied(_ context.Context, index uint64) error {
	if f.AppliedIndex() < index {
		return fmt.Errorf("fake backend: index %d not applied", index)
	}
	return nil
}

// OnKeyReady hands the state machine's Ready hook to fn.
func (f *fakeBackend) OnKeyReady(fn func(db int, key []byte)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.a.Ready = fn
}

func (f *fakeBackend) Status() node.Status {
	return node.Status{Role: "master", Fsync: "always", Raft: map[string]string{"state": "Leader"}, Clustered: f.clustered}
}

// startServer serves a fake backend on a free loopback port.
func startServer(t *testing.T, cfg Config) (*Server, *fakeBackend) {
	t.Helper()
	fb := newFakeBackend()
	return serveBackend(t, cfg, fb), fb
}

// serveBackend serves b on a free loopback port until the test ends.
func serveBackend(t *testing.T, cfg Config, b Backend) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	s := NewServer(cfg, b)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

// conn is a raw RESP test connection.
type conn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dial(t *testing.T, s *Server) *conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, rd: bufio.NewReader(c)}
}

func encode(argv ...string) []byte { return wire.AppendCommandStrings(nil, argv...) }

func (c *conn) send(b []byte) {
	c.t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.c.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *conn) do(argv ...string) string {
	c.t.Helper()
	c.send(encode(argv...))
	return c.read()
}

// read returns one whole reply's bytes.
func (c *conn) read() string {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var out bytes.Buffer
	if err := wire.CopyReply(c.rd, &out); err != nil {
		c.t.Fatalf("reading reply: %v (got %q)", err, out.String())
	}
	return out.String()
}

// replicaFake is a fakeBackend with replicas (ReplicaBackend): reps is
// what Replicas returns, looks how many times it was asked.
type replicaFake struct {
	*fakeBackend
	rmu   sync.Mutex
	reps  node.Replicas
	looks int
}

func (r *replicaFake) Replicas() node.Replicas {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	r.looks++
	return r.reps
}

func (r *replicaFake) set(reps node.Replicas) (looks int) {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	r.reps = reps
	return r.looks
}
