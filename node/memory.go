package node

import (
	"errors"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/raftfsm"
)

// maxmemory, with Redis's noeviction policy: while the node's used memory
// is above the limit, commands that may grow memory (Redis's denyoom
// flag: ZADD, ZINCRBY, ZUNIONSTORE, ZRANGESTORE, COPY, ...) are refused
// with ErrOOM; reads, deletions and the other writes go on.
//
// The leader decides. It checks its own used memory before it proposes an
// entry, whether the entry comes from its own clients or is forwarded by
// a follower, so every node agrees on what was refused: a refused write
// never reaches the log, and the state machine applies whatever the log
// holds without looking at memory (apply stays deterministic). A
// follower's maxmemory is what it will use once it leads.
//
// Used memory is the Go heap: the bytes of the objects allocated and not
// yet freed (runtime/metrics /memory/classes/heap/objects:bytes, Go's
// HeapAlloc), which INFO reports as used_memory, like Redis's count of
// the bytes its allocator handed out. It covers everything the process
// holds, not only the keys: client buffers, the Raft log cache, and the
// copy of the state a snapshot writes out. That is what runs a process
// out of memory; the keyspace's own accounting (MEMORY USAGE) is exact
// per key but misses the rest, and summing it means walking every key.
// The heap also holds garbage until the collector frees it, so when
// maxmemory is set the collector's soft limit (GOMEMLIMIT) is set to it
// too, unless the environment sets GOMEMLIMIT: garbage is then collected
// before used memory reaches maxmemory, and what stays above it is data.
// A refusal also starts a collection (at most one a second), so memory
// freed by a deletion counts at once.
//
// The check costs nothing without maxmemory, and one reading of the heap
// statistics per entry proposed (about half a microsecond, at most one
// reading a millisecond) with it. Only when the limit is passed is an
// entry decoded to see its commands.

// memoryLimit is a node's maxmemory state.
type memoryLimit struct {
	max atomic.Uint64 // bytes; 0: no limit
	// used caches the last reading of the heap, taken at readAt (ns since
	// memClock).
	used   atomic.Int64
	readAt atomic.Int64
	// gcAt is when the last collection a refusal started began (ns since
	// memClock); gcRunning is set while it runs.
	gcAt      atomic.Int64
	gcRunning atomic.Bool
}

// memClock is the monotonic origin of the cached readings.
var memClock = time.Now()

// Reading intervals.
const (
	memReadEvery  = time.Millisecond
	memCollectGap = time.Second
)

// SetMaxMemory sets maxmemory in bytes (0: none), any 64-bit value as
// Redis takes. Unless the environment sets GOMEMLIMIT, the collector's
// soft limit follows it (capped at the largest the runtime takes).
func (n *Node) SetMaxMemory(bytes uint64) {
	n.mem.max.Store(bytes)
	n.mem.readAt.Store(math.MinInt64 / 2) // the next check reads afresh
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		if bytes == 0 {
			debug.SetMemoryLimit(math.MaxInt64)
		} else {
			debug.SetMemoryLimit(int64(min(bytes, math.MaxInt64)))
		}
	}
}

// OverMaxMemory reports whether this node's used memory is above its
// maxmemory (false without one), from a reading at most a millisecond
// old.
func (n *Node) OverMaxMemory() bool { return n.mem.overLimit() }

// MaxMemory returns maxmemory in bytes (0: none).
func (n *Node) MaxMemory() uint64 { return n.mem.max.Load() }

// UsedMemory returns the bytes of the Go heap in use (INFO used_memory).
func UsedMemory() int64 {
	s := [1]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// overLimit reports whether used memory is above maxmemory, from a
// reading at most memReadEvery old.
func (m *memoryLimit) overLimit() bool {
	limit := m.max.Load()
	if limit == 0 {
		return false
	}
	now := int64(time.Since(memClock))
	if now-m.readAt.Load() >= int64(memReadEvery) {
		m.used.Store(UsedMemory())
		m.readAt.Store(now)
	}
	return uint64(max(m.used.Load(), 0)) > limit
}

// collect starts a garbage collection in the background, unless one
// started less than memCollectGap ago or is running: what a deletion
// freed is then no longer counted.
func (m *memoryLimit) collect() {
	now := int64(time.Since(memClock))
	last := m.gcAt.Load()
	if now-last < int64(memCollectGap) || !m.gcAt.CompareAndSwap(last, now) || !m.gcRunning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		runtime.GC()
		m.readAt.Store(math.MinInt64 / 2) // read again at the next check
		m.gcRunning.Store(false)
	}()
}

// growsMemory reports whether cmd is a command that may grow memory
// (Redis's denyoom flag).
func growsMemory(cmd *raftfsm.Command) bool {
	if len(cmd.Argv) == 0 {
		return false
	}
	spec := command.Lookup(cmd.Argv[0])
	if spec == nil || spec.Meta == nil {
		return false
	}
	return command.MetaFor(spec.Meta, cmd.Argv).Flags&command.CmdDenyOOM != 0
}

// admitMemory is the leader's maxmemory check of an entry it is about to
// propose. It returns nil when the entry may go to the log as it is;
// otherwise the Pending to answer instead: ErrOOM for a command or a
// transaction that may grow memory, and for a batch of pipelined writes
// that mixes such commands with others, the others proposed (in runs,
// in order) and the refused ones answered ErrOOM's reply in their places,
// as Redis answers each command of a pipeline on its own.
func (n *Node) admitMemory(data []byte, term uint64) *Pending {
	if !n.mem.overLimit() {
		return nil
	}
	e, err := raftfsm.Decode(data)
	if err != nil {
		return nil // not a command entry this check knows: Validate's business
	}
	switch e.Op {
	case raftfsm.OpCommand, raftfsm.OpMulti:
		for i := range e.Commands {
			if growsMemory(&e.Commands[i]) {
				n.mem.collect()
				return &Pending{err: ErrOOM}
			}
		}
		return nil
	case raftfsm.OpBatch:
		return n.splitBatch(e, term)
	case raftfsm.OpChunk:
		// A piece of a write too large for one entry: it may grow memory.
		n.mem.collect()
		return &Pending{err: ErrOOM}
	}
	return nil
}

// oomReply is ErrOOM's reply inside a batch's replies, the same in RESP2
// and RESP3.
var oomReply = []byte("-OOM command not allowed when used memory > 'maxmemory'.\r\n")

// splitBatch answers a batch of pipelined writes while memory is over the
// limit: runs of commands that do not grow memory are proposed as entries
// of their own, in order; the others are refused.
func (n *Node) splitBatch(e *raftfsm.Entry, term uint64) *Pending {
	refused := 0
	for i := range e.Commands {
		if growsMemory(&e.Commands[i]) {
			refused++
		}
	}
	switch refused {
	case 0:
		return nil
	case len(e.Commands):
		n.mem.collect()
		return &Pending{err: ErrOOM}
	}
	n.mem.collect()
	f := &batchFuture{}
	// Each run is fenced to the term like any entry (no proposal ID: the
	// parts' outcomes are not looked up across a leadership change).
	run := raftfsm.Entry{Time: e.Time, Proto: e.Proto, Double70: e.Double70, Term: term}
	flush := func() {
		if len(run.Commands) == 0 {
			return
		}
		run.Op = raftfsm.OpCommand
		if len(run.Commands) > 1 {
			run.Op = raftfsm.OpBatch
		}
		f.parts = append(f.parts, n.group.submit(run.Encode(nil)))
		run.Commands = nil
	}
	for i := range e.Commands {
		if growsMemory(&e.Commands[i]) {
			flush()
			f.parts = append(f.parts, nil)
			continue
		}
		run.Commands = append(run.Commands, e.Commands[i])
	}
	flush()
	return &Pending{f: f}
}

// batchFuture is the outcome of a batch split by splitBatch: its parts
// are, in the batch's order, the Raft future of each run proposed and nil
// for each command refused.
type batchFuture struct {
	parts []raft.ApplyFuture
	once  sync.Once
	err   error
	res   raftfsm.Result
}

var _ raft.ApplyFuture = (*batchFuture)(nil)

// Error waits for every part. When none was appended to the log, it is
// the error of the first (the batch may be proposed again); when only
// some were, it is ErrUncertain: one error cannot tell the outcome.
func (b *batchFuture) Error() error {
	b.once.Do(func() {
		failed, notAppended := 0, 0
		var first error
		for _, f := range b.parts {
			if f == nil {
				b.res.Reply = append(b.res.Reply, oomReply...)
				continue
			}
			err := f.Error()
			if err == nil {
				if res, _ := f.Response().(raftfsm.Result); res.Err != nil {
					err = res.Err
				} else {
					b.res.Index = res.Index
					b.res.Reply = append(b.res.Reply, res.Reply...)
					continue
				}
			}
			failed++
			if first == nil {
				first = err
			}
			if errors.Is(translateRaftErr(err), ErrNotLeader) {
				notAppended++
			}
		}
		switch {
		case failed == 0:
		case notAppended == len(b.parts)-b.refused():
			b.err = first
		default:
			b.err = ErrUncertain
		}
		if b.err != nil {
			b.res = raftfsm.Result{}
		}
	})
	return b.err
}

func (b *batchFuture) refused() int {
	n := 0
	for _, f := range b.parts {
		if f == nil {
			n++
		}
	}
	return n
}

// Index is the log index of the last run applied.
func (b *batchFuture) Index() uint64 {
	b.Error()
	return b.res.Index
}

// Response is the batch's raftfsm.Result: the replies of every command,
// in order.
func (b *batchFuture) Response() interface{} {
	b.Error()
	return b.res
}
