package command

import (
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
)

// Ctx is what a command runs with.
type Ctx struct {
	KS *keyspace.Keyspace
	DB int
	// Now is Unix milliseconds: the leader's clock recorded in the log entry
	// on the write path, the local clock on the read path.
	Now int64
	// Index is the log index of the entry being applied; 0 on the read path.
	Index uint64
	W     *Writer
	// Ready, when set, is called when a write leaves a sorted set with
	// members, so clients blocked on it can be served.
	Ready func(db int, key []byte)
	// Rand returns random numbers for commands that choose (ZRANDMEMBER,
	// RANDOMKEY) on the read path. On the apply path (inside MULTI) it is
	// nil and the choice comes from a generator seeded by the log index,
	// so every node answers alike.
	Rand func() uint64
	// Hits and Misses count the keys a read found and did not find
	// (keyspace_hits, keyspace_misses); the caller resets them.
	Hits, Misses int
}

// writing reports whether the command runs on the apply path.
func (c *Ctx) writing() bool { return c.Index != 0 }

func (c *Ctx) db() *keyspace.DB { return c.KS.DB(c.DB) }

// lookup returns key's entry or nil, on either path.
func (c *Ctx) lookup(key []byte) *keyspace.Entry {
	if c.writing() {
		return c.db().GetForWrite(key, c.Now, c.Index)
	}
	e := c.db().Get(key, c.Now)
	if e != nil {
		c.Hits++
	} else {
		c.Misses++
	}
	return e
}

// zset returns key's sorted set or nil.
func (c *Ctx) zset(key []byte) *packed.ZSet {
	if e := c.lookup(key); e != nil {
		return e.Z
	}
	return nil
}

// store stores z under key, with no expiry, and returns its entry.
func (c *Ctx) store(key []byte, z *packed.ZSet) *keyspace.Entry {
	e := &keyspace.Entry{Z: z}
	c.db().Set(key, e, c.Index)
	return e
}

// layoutFor is the layout a new set stored under key gets: the one ZCREATE
// declared for it, else the first packed rule matching its name, else
// standard.
func (c *Ctx) layoutFor(key []byte) packed.Layout {
	if l, ok := c.db().Declared(key); ok {
		return l
	}
	return c.KS.Rules().LayoutFor(key)
}

// changed records that key's set changed: deletes the key if the set is
// empty, stamps its version, and signals readiness when it has members.
func (c *Ctx) changed(key []byte, e *keyspace.Entry) {
	if e.Z.Len() == 0 {
		c.db().Delete(key, c.Index)
		return
	}
	c.db().Touch(key, c.Index)
	if c.Ready != nil {
		c.Ready(c.DB, key)
	}
}

// Run executes argv (whose spec the caller looked up and arity-checked).
func Run(c *Ctx, s *Spec, argv [][]byte) { s.Run(c, argv) }
