package node

import (
	"sync"

	"github.com/hashicorp/raft"
)

// closingStable is the stable store (term and vote) raft is given, made
// safe to close under raft's heartbeat fast path. hashicorp/raft handles
// a leader's heartbeat on the transport's goroutine, not its own, and
// one that passed raft's shutdown check just before the node closed can
// still record a newer term after the store closed, which raft answers
// with a panic ("failed to save current term: database not open"). Once
// the node closes, writes are dropped instead: raft has stopped, so it
// acts on no term or vote any more, and the store keeps what was written
// before. Until then reads and writes go to the store unchanged.
type closingStable struct {
	raft.StableStore
	closeStore func() error

	mu     sync.RWMutex
	closed bool
}

func (s *closingStable) Set(key, val []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.StableStore.Set(key, val)
}

func (s *closingStable) SetUint64(key []byte, val uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.StableStore.SetUint64(key, val)
}

// close drops later writes, waits for those under way, and closes the
// store.
func (s *closingStable) close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.closeStore()
}
