package raftfsm

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
)

// FSM adapts an Applier to hashicorp/raft.
type FSM struct {
	A *Applier
	// applied is the index of the last log the FSM has applied.
	applied atomic.Uint64
	mu      sync.Mutex
	waiters []waiter
	// OnApply, if set, is called after each applied batch with the
	// entries that were commands (for blocking pops and statistics).
	OnApply func(lastIndex uint64)
	// scratch is the entry ApplyBatch decodes into (only raft's FSM
	// goroutine applies).
	scratch Entry
	// OnSnapshotReleased, if set, is called once raft is done with a
	// snapshot (persisted or not) and its clone of the state is garbage.
	OnSnapshotReleased func()
}

type waiter struct {
	index uint64
	ch    chan struct{}
}

var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.BatchingFSM = (*FSM)(nil)
)

// New returns an FSM over an empty keyspace.
func New() *FSM { return &FSM{A: NewApplier(keyspace.New())} }

// KS returns the keyspace (which Restore may replace: call it each time).
func (f *FSM) KS() *keyspace.Keyspace {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.A.KS
}

// Applied returns the index of the last applied log.
func (f *FSM) Applied() uint64 { return f.applied.Load() }

// WaitApplied returns a channel closed once the log at index is applied.
func (f *FSM) WaitApplied(index uint64) <-chan struct{} {
	ch := make(chan struct{})
	if f.applied.Load() >= index {
		close(ch)
		return ch
	}
	f.mu.Lock()
	if f.applied.Load() >= index {
		close(ch)
	} else {
		f.waiters = append(f.waiters, waiter{index, ch})
	}
	f.mu.Unlock()
	return ch
}

func (f *FSM) setApplied(index uint64) {
	f.applied.Store(index)
	f.mu.Lock()
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.index <= index {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	for i := len(kept); i < len(f.waiters); i++ {
		f.waiters[i] = waiter{}
	}
	f.waiters = kept
	f.mu.Unlock()
}

// Apply applies one log (raft uses ApplyBatch; this is for completeness).
func (f *FSM) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed logs under one write lock. It panics on an
// entry it cannot decode: the log is corrupt, and carrying on would let
// this node diverge from its peers.
func (f *FSM) ApplyBatch(logs []*raft.Log) []interface{} {
	out := make([]interface{}, len(logs))
	ks := f.KS()
	ks.Lock()
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		e := &f.scratch
		if err := DecodeInto(e, l.Data); err != nil {
			ks.Unlock()
			panic(fmt.Sprintf("goblin: log entry %d (term %d) cannot be decoded: %v; the log is corrupt", l.Index, l.Term, err))
		}
		if r := f.A.Apply(l.Index, e); r != nil {
			out[i] = Result{Index: l.Index, Reply: r}
		} else {
			out[i] = Result{Index: l.Index}
		}
	}
	ks.Unlock()
	if len(logs) > 0 {
		last := logs[len(logs)-1].Index
		f.setApplied(last)
		if f.OnApply != nil {
			f.OnApply(last)
		}
	}
	return out
}

// Result is what Apply returns for each log through raft's ApplyFuture.
type Result struct {
	Index uint64
	Reply []byte
}
