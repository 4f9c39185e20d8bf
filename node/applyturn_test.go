package node

import (
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// nopFSM is a state machine that keeps nothing, for a bare Raft.
type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) interface{}         { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, io.EOF }
func (nopFSM) Restore(io.ReadCloser) error         { return nil }

// bareRaft is a one-server Raft in memory; bootstrapped, it leads.
func bareRaft(t *testing.T, bootstrap bool) *raft.Raft {
	t.Helper()
	cfg := raft.DefaultConfig()
	cfg.LocalID = "a"
	cfg.HeartbeatTimeout = 50 * time.Millisecond
	cfg.ElectionTimeout = 50 * time.Millisecond
	cfg.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.LogOutput = io.Discard
	addr, trans := raft.NewInmemTransport("a")
	store := raft.NewInmemStore()
	snaps := raft.NewDiscardSnapshotStore()
	if bootstrap {
		conf := raft.Configuration{Servers: []raft.Server{{ID: "a", Address: addr}}}
		if err := raft.BootstrapCluster(cfg, store, store, snaps, trans, conf); err != nil {
			t.Fatal(err)
		}
	}
	r, err := raft.NewRaft(cfg, nopFSM{}, store, store, snaps, trans)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown().Error() })
	return r
}

// yielded reports whether before yielded, and checks that it then called
// durable with the batch's last index.
func yielded(t *testing.T, turn *applyTurn) bool {
	t.Helper()
	var got uint64
	turn.durable = func(i uint64) { got = i }
	yields := 0
	turn.yield = func() { yields++ }
	turn.before(42)
	if got != 42 {
		t.Errorf("durable called with %d, want 42", got)
	}
	return yields > 0
}

func TestApplyTurnFollowerYields(t *testing.T) {
	follower := bareRaft(t, false)
	leader := bareRaft(t, true)
	deadline := time.Now().Add(5 * time.Second)
	for leader.State() != raft.Leader {
		if time.Now().After(deadline) {
			t.Fatal("the bootstrapped Raft did not lead")
		}
		time.Sleep(10 * time.Millisecond)
	}
	procs := runtime.GOMAXPROCS(1)
	turn := newApplyTurn(nil)
	runtime.GOMAXPROCS(procs)
	if !turn.oneThread {
		t.Fatal("GOMAXPROCS 1 not seen as one thread")
	}
	if yielded(t, turn) {
		t.Error("yielded before Raft runs")
	}
	turn.raft.Store(follower)
	if !yielded(t, turn) {
		t.Error("a follower applied without yielding first")
	}
	turn.raft.Store(leader)
	if yielded(t, turn) {
		t.Error("a leader yielded before applying")
	}
	turn.raft.Store(follower)
	turn.oneThread = false
	if yielded(t, turn) {
		t.Error("yielded with more than one thread")
	}

	// The real yield lets a goroutine already runnable run first (one
	// thread; Go's scheduler takes its global queue first one time in
	// 61, so a few tries).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	real := newApplyTurn(nil)
	real.raft.Store(follower)
	for try := 0; ; try++ {
		var ran atomic.Bool
		go ran.Store(true)
		real.before(1)
		if ran.Load() {
			break
		}
		if try == 10 {
			t.Fatal("a runnable goroutine did not run during a follower's yield, 10 tries")
		}
		for !ran.Load() {
			runtime.Gosched()
		}
	}
}
