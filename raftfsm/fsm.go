package raftfsm

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
)

// FSM adapts an Applier to hashicorp/raft.
type FSM struct {
	// applier runs committed entries against the keyspace (Applier).
	applier *Applier
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
	// groupScratch holds the entries of the group being applied.
	groupScratch [][]byte
	// chunks keeps the pieces of the split entries whose last piece has
	// not been applied yet, by the entry's ID (chunk.go). Only raft's FSM
	// goroutine (apply, snapshot, restore) touches it.
	chunks map[uint64]*chunkBuf
	// chunkBytes is what chunks keeps in all.
	chunkBytes int
	// OnSnapshotReleased, if set, is called once raft is done with a
	// snapshot (persisted or not) and its clone of the state is garbage.
	OnSnapshotReleased func()
	// Logger receives an ERROR line for every failed entry. Optional.
	Logger hclog.Logger
	// failed counts the entries recorded as failed (Failed).
	failed atomic.Uint64
	// OnProposal, if set, is called with the proposal and result of every
	// applied entry that has a proposal header (proposal.go). It runs
	// under the keyspace's write lock and must not block.
	OnProposal func(proposal uint64, res Result)
	// OnGroup, if set, is called with the bytes, index and results of
	// every group applied (group.go), under the keyspace's write lock; it
	// must not block.
	OnGroup func(data []byte, index uint64, res GroupResult)
	// BeforeApply, if set, is called with the last index of each batch
	// before it is applied, outside every lock: it returns once the batch
	// may be applied (a leader whose own copy is not yet durable waits
	// for it there; a follower lets the goroutines already runnable run
	// first).
	BeforeApply func(lastIndex uint64)
	// appliedTerm, restores and termCh: AppliedTerm, Restores and
	// TermChanged (proposal.go).
	appliedTerm atomic.Uint64
	restores    atomic.Uint64
	termCh      atomic.Pointer[chan struct{}]
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
func New() *FSM { return &FSM{applier: NewApplier(keyspace.New())} }

// Applier returns the applier the FSM runs committed entries through.
func (f *FSM) Applier() *Applier { return f.applier }

// KS returns the keyspace (which Restore may replace: call it each time).
func (f *FSM) KS() *keyspace.Keyspace {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applier.KS
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

// ApplyBatch applies committed logs under one write lock.
//
// An entry whose proposal header names another term than the one it was
// committed in changes nothing and answers ErrOtherTerm (proposal.go).
//
// An entry that cannot be decoded (corrupt, or written by a build that
// knows an op or format this one does not) is recorded as failed: it
// changes nothing, its result carries an error wrapping ErrEntryFailed
// for its proposer, Failed counts it and Logger gets an ERROR line with
// its index and term. Every node decides alike from the same bytes, so
// the nodes stay identical, and a restart that replays the entry fails
// it again instead of stopping.
func (f *FSM) ApplyBatch(logs []*raft.Log) []interface{} {
	if f.BeforeApply != nil && len(logs) > 0 {
		f.BeforeApply(logs[len(logs)-1].Index)
	}
	out := make([]interface{}, len(logs))
	ks := f.KS()
	ks.Lock()
	for i, l := range logs {
		if len(f.chunks) > 0 {
			f.dropStaleChunks(l.Index, l.Term)
		}
		if l.Type != raft.LogCommand {
			continue
		}
		if isGroup(l.Data) {
			out[i] = f.applyGroup(l)
			continue
		}
		e := &f.scratch
		if err := DecodeInto(e, l.Data); err != nil {
			out[i] = f.fail(l, err)
			continue
		}
		res := f.applyFenced(l.Index, l.Term, e)
		out[i] = res
		if e.Proposal != 0 && f.OnProposal != nil {
			f.OnProposal(e.Proposal, res)
		}
	}
	if len(logs) > 0 {
		// Published before the lock is released, so whoever holds the
		// read lock knows the index of the state it reads (Capture).
		f.applied.Store(logs[len(logs)-1].Index)
	}
	ks.Unlock()
	if len(logs) > 0 {
		last := logs[len(logs)-1]
		f.setApplied(last.Index)
		f.advanceTerm(last.Term)
		if f.OnApply != nil {
			f.OnApply(last.Index)
		}
	}
	return out
}

// fail records l as a failed entry and returns its result.
func (f *FSM) fail(l *raft.Log, cause error) Result {
	f.failed.Add(1)
	if f.Logger != nil {
		op := "unknown"
		switch {
		case isGroup(l.Data):
			op = "group"
		case len(l.Data) >= 2 && (l.Data[0] == Version || l.Data[0] == VersionProposal):
			op = Op(l.Data[1]).String()
		}
		f.Logger.Error("log entry failed: it cannot be decoded, and changes nothing",
			"index", l.Index, "term", l.Term, "bytes", len(l.Data), "op", op, "error", cause)
	}
	return Result{Index: l.Index, Err: fmt.Errorf("%w (index %d): %w", ErrEntryFailed, l.Index, cause)}
}

// Failed returns how many entries this FSM recorded as failed since it
// started (a restart replays the log, and counts again what it replays).
func (f *FSM) Failed() uint64 { return f.failed.Load() }

// ErrEntryFailed is wrapped by Result.Err for an entry the state machine
// recorded as failed: nothing of it was applied.
var ErrEntryFailed = errors.New("log entry failed")

// Result is what Apply returns for each log through raft's ApplyFuture.
type Result struct {
	Index uint64
	// Reply holds the entry's replies, in the protocol it asked for.
	Reply []byte
	// Err is set, and Reply empty, when the entry failed as a whole
	// (ErrEntryFailed): its proposer answers each of its commands with
	// this error.
	Err error
}
