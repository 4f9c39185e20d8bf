package raftfsm

import (
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
)

// tombstoneWindow is how many log entries a deleted key's deletion index
// is remembered for WATCH; pruning runs every tombstonePruneEvery entries.
const (
	tombstoneWindow     = keyspace.TombstoneWindow
	tombstonePruneEvery = 1 << 12
)

// Applier executes decoded entries against a keyspace. It is the whole
// state machine without Raft: feed it a log in order and it produces the
// same keyspace and replies as every node did. Callers hold KS's write
// lock around Apply.
type Applier struct {
	KS *keyspace.Keyspace
	// Ready is called when a write leaves a sorted set with members, so
	// blocked clients can be served; after a snapshot is restored it is
	// called once with db -1 and a nil key: any key may have changed.
	// It runs under the keyspace's write lock and must not block. Optional.
	Ready func(db int, key []byte)
	// now is the state's clock: the largest entry time seen, so time never
	// runs backwards when leadership moves to a node with a slower clock.
	now int64
	w   command.Writer
	ctx command.Ctx // reused by every command: no allocation per command
	// acl is the ACL users (aclstate.go), published for the RESP edge.
	acl aclState
	aclPublished
}

// errEntryReplyTooLarge answers the reads of an entry whose replies
// already passed command.MaxAppliedReply.
var errEntryReplyTooLarge = command.Errorf("ERR reply too large: this transaction's replies passed %d MiB, its remaining reads are not run", command.MaxAppliedReply>>20)

// NewApplier returns an Applier over ks.
func NewApplier(ks *keyspace.Keyspace) *Applier { return &Applier{KS: ks} }

// Now returns the state's clock (Unix ms).
func (a *Applier) Now() int64 { return a.now }

// Apply executes e, the entry at log index, and returns the reply bytes
// (nil for entries that have no reply).
func (a *Applier) Apply(index uint64, e *Entry) []byte {
	if e.Time > a.now {
		a.now = e.Time
	}
	if index%tombstonePruneEvery == 0 && index > tombstoneWindow {
		a.KS.PruneTombstones(index - tombstoneWindow)
	}
	switch e.Op {
	case OpCommand, OpBatch:
		a.begin(e)
		for _, c := range e.Commands {
			a.run(index, c)
		}
		return a.reply()
	case OpMulti:
		a.begin(e)
		if a.watchFailed(e) {
			a.w.NullArray()
			return a.reply()
		}
		a.w.Array(len(e.Commands))
		for _, c := range e.Commands {
			a.run(index, c)
		}
		return a.reply()
	case OpExpire:
		for _, k := range e.Expired {
			db := a.KS.DB(k.DB)
			if ent := db.Peek(k.Key); ent != nil && ent.ExpireAt == k.At && k.At <= a.now {
				db.DeleteExpired(k.Key, index)
			}
		}
	case OpRules:
		a.KS.SetRules(rulesFromLog(e.Rules))
	case OpACL:
		return a.applyACL(e.ACL)
	}
	return nil
}

func (a *Applier) begin(e *Entry) {
	a.w.Reset()
	a.w.Proto = int(e.Proto)
	a.w.Format = command.Double72
	if e.Double70 {
		a.w.Format = command.Double70
	}
}

// reply returns a copy of what the writer holds: the bytes outlive this
// call (they travel back to the client's connection).
func (a *Applier) reply() []byte {
	return append([]byte(nil), a.w.Bytes()...)
}

func (a *Applier) run(index uint64, c Command) {
	spec := command.Lookup(c.Argv[0])
	if spec == nil {
		a.w.Error(command.UnknownCommandError(c.Argv))
		return
	}
	if !spec.CheckArity(len(c.Argv)) {
		a.w.Error(command.ArityError(spec.Name))
		return
	}
	if a.w.Len() > command.MaxAppliedReply && spec.Flags&command.Write == 0 {
		// Reads past the bound would only grow the reply (writes still
		// run: the entry is applied whole).
		a.w.Error(errEntryReplyTooLarge)
		return
	}
	a.ctx = command.Ctx{KS: a.KS, DB: c.DB, Now: a.now, Index: index, W: &a.w, Ready: a.Ready}
	spec.Run(&a.ctx, c.Argv)
}

// watchFailed reports whether EXEC must abort because a watched key
// changed after it was watched, as Redis decides it (keyspace.Changed).
func (a *Applier) watchFailed(e *Entry) bool {
	for _, w := range e.Watched {
		since := w.Index
		if since == 0 {
			since = e.WatchIndex
		}
		ws := keyspace.Watch{Since: since, Existed: !w.Absent && !w.Expired, Expired: w.Expired}
		if a.KS.Changed(w.DB, w.Key, ws, a.now) {
			return true
		}
	}
	return false
}
