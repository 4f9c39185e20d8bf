package node

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node/wal"
)

// heldSyncs holds a node's log fdatasyncs while held is set, until it is
// cleared.
type heldSyncs struct {
	mu     sync.Mutex
	held   bool
	freed  chan struct{}
	waited atomic.Int64
}

func (h *heldSyncs) hold() {
	h.mu.Lock()
	h.held, h.freed = true, make(chan struct{})
	h.mu.Unlock()
}

func (h *heldSyncs) free() {
	h.mu.Lock()
	if h.held {
		h.held = false
		close(h.freed)
	}
	h.mu.Unlock()
}

func (h *heldSyncs) inject(op wal.Op) error {
	h.mu.Lock()
	held, freed := h.held, h.freed
	h.mu.Unlock()
	if op == wal.OpSync && held {
		h.waited.Add(1)
		<-freed
	}
	return nil
}

// A cluster leader's fdatasync runs beside replication, so Raft may count
// an entry committed while the leader's copy is not yet durable: one
// follower's copy then is the only one on stable storage. Until the
// leader's is durable too, the write is not answered and no node applies
// it, the leader's read index does not cover it, and the followers are
// not told it is committed.
func TestLeaderSyncHoldsWhatOnlyOneCopyHoldsDurably(t *testing.T) {
	syncs := map[string]*heldSyncs{"n1": {}, "n2": {}, "n3": {}}
	tc := newTestCluster(t, 3, func(c *Config) {
		c.Fsync = FsyncAlways
		c.logInject = syncs[c.ID].inject
	})
	leader := tc.waitLeader()
	if err := addK(leader, "before", 1); err != nil {
		t.Fatal(err)
	}
	if leader.stores.leader == nil {
		t.Fatal("the leader does not defer its syncs")
	}
	before := leader.raft.LastIndex()
	syncs[leader.ID()].hold()
	defer syncs[leader.ID()].free()

	acked := make(chan error, 1)
	go func() { acked <- addK(leader, "held", 2) }()
	// Every follower stores it (each fsyncs before it answers), and Raft
	// counts it committed with the leader's unsynced copy.
	testutil.Poll(t, 10*time.Second, "the write committed by Raft on the followers' copies", func() bool {
		if leader.raft.CommitIndex() <= before {
			return false
		}
		for _, n := range tc.all() {
			if n.raft.LastIndex() <= before {
				return false
			}
		}
		return true
	})
	if syncs[leader.ID()].waited.Load() == 0 {
		t.Fatal("the leader's sync was never held")
	}
	// Many commit timeouts (5 ms): followers would have learned the
	// commit index by now.
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-acked:
		t.Fatalf("the write was answered (%v) before the leader's copy was durable", err)
	default:
	}
	for _, n := range tc.all() {
		if got := n.fsm.Applied(); got > before {
			t.Errorf("%s applied index %d past %d before the leader's copy was durable", n.ID(), got, before)
		}
	}
	if idx := leader.commitIndex(); idx > before {
		t.Errorf("the leader's read index %d covers the write before its copy is durable", idx)
	}

	syncs[leader.ID()].free()
	select {
	case err := <-acked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write was not answered once the leader's copy was durable")
	}
	testutil.Poll(t, 10*time.Second, "every node applying the write", func() bool {
		for _, n := range tc.all() {
			if n.fsm.Applied() <= before {
				return false
			}
		}
		return true
	})
}

// A cluster leader whose deferred fdatasync fails refuses writes with the
// log error and hands leadership over; the write in flight is answered
// once it is durable somewhere it is applied (on the new leader), and the
// old leader catches up once its log syncs again.
func TestLeaderSyncFailureHandsLeadershipOver(t *testing.T) {
	faults := map[string]*diskFaults{"n1": {}, "n2": {}, "n3": {}}
	tc := newTestCluster(t, 3, func(c *Config) {
		c.Fsync = FsyncAlways
		c.logInject = faults[c.ID].inject
	})
	old := tc.waitLeader()
	if err := addK(old, "before", 1); err != nil {
		t.Fatal(err)
	}
	faults[old.ID()].set(wal.OpSync, syscall.EIO)
	inFlight := make(chan error, 1)
	go func() { inFlight <- addK(old, "in flight", 2) }()
	testutil.Poll(t, 10*time.Second, "the old leader's log fault", func() bool { return old.LogFault() != nil })
	leader := tc.leaderOtherThan(old)
	if err := addK(leader, "new leader", 3); err != nil {
		t.Fatal(err)
	}
	if err := addK(old, "refused", 4); !errors.Is(err, ErrLogWrite) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("write through the failing node: %v, want ErrLogWrite (EIO)", err)
	}
	faults[old.ID()].set(wal.OpSync, nil)
	select {
	case err := <-inFlight:
		if err != nil {
			t.Fatalf("the write in flight: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write in flight was never answered")
	}
	testutil.Poll(t, 60*time.Second, "the old leader to catch up", func() bool {
		return old.LogFault() == nil && score(old, "k", "new leader") != ""
	})
	checkAll(t, old, []string{"before", "in flight", "new leader"})
}
