package node

import (
	"sync"
	"sync/atomic"
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
