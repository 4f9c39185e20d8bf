package keyspace

import (
	"sync"

	"github.com/goblindb/goblin/packed"
)

// NumDBs is the number of databases, as in Redis's default configuration.
const NumDBs = 16

// Entry is one key's value and metadata.
type Entry struct {
	Z        *packed.ZSet
	ExpireAt int64  // Unix milliseconds; 0 means no expiry
	Version  uint64 // log index of the last modification (for WATCH)
}

// Expired reports whether the entry's time to live had run out at now
// (Unix ms): Redis counts a key as gone from its expiry time on.
func (e *Entry) Expired(now int64) bool { return e.ExpireAt != 0 && e.ExpireAt <= now }

// Keyspace is the whole replicated state: NumDBs databases and the packed
// layout rules in force.
type Keyspace struct {
	sync.RWMutex
	dbs   [NumDBs]*DB
	rules Rules
	// flushed is the log index of the last FLUSHALL/FLUSHDB per database:
	// every key of that database counts as modified at that index.
	flushed [NumDBs]uint64
	// horizon: deletions before this log index are forgotten, so any key
	// without a newer record counts as modified at horizon (WATCH aborts
	// conservatively rather than miss a change).
	horizon uint64
}

// New returns an empty keyspace.
func New() *Keyspace {
	ks := &Keyspace{}
	for i := range ks.dbs {
		ks.dbs[i] = newDB()
	}
	return ks
}

// DB returns database i (0 <= i < NumDBs).
func (ks *Keyspace) DB(i int) *DB { return ks.dbs[i] }

// Rules returns the packed-layout rules in force.
func (ks *Keyspace) Rules() Rules { return ks.rules }

// SetRules replaces the packed-layout rules (a replicated decision).
func (ks *Keyspace) SetRules(r Rules) { ks.rules = r }

// Flush empties database i at log index idx; now (Unix ms) tells which
// keys had expired. Keys changed recently enough for a WATCH to care get
// tombstones, as do their earlier deletions, so EXEC can tell a watched
// key that existed at the flush from one that never did.
func (ks *Keyspace) Flush(i int, idx uint64, now int64) {
	old := ks.dbs[i]
	nd := newDB()
	since := ks.recentSince(idx)
	for k, t := range old.tombstones {
		if t >= since {
			nd.tombstones[k] = t
			if _, ok := old.expiredDel[k]; ok {
				nd.expiredDel[k] = struct{}{}
			}
		}
	}
	for k, e := range old.keys {
		if e.Version < since {
			continue
		}
		nd.tombstones[k] = idx
		if e.Expired(now) {
			nd.expiredDel[k] = struct{}{}
		} else {
			delete(nd.expiredDel, k)
		}
	}
	ks.dbs[i] = nd
	ks.flushed[i] = idx
}

// FlushAll empties every database at log index idx.
func (ks *Keyspace) FlushAll(idx uint64, now int64) {
	for i := range ks.dbs {
		ks.Flush(i, idx, now)
	}
}

// Swap exchanges the contents of databases a and b at log index idx.
func (ks *Keyspace) Swap(a, b int, idx uint64) {
	ks.dbs[a], ks.dbs[b] = ks.dbs[b], ks.dbs[a]
	ks.flushed[a], ks.flushed[b] = idx, idx
}

// Modified returns the log index at which key in database db last changed,
// as far as the keyspace can tell: its entry's version, or the database's
// last flush or the key's deletion when absent.
func (ks *Keyspace) Modified(db int, key []byte) uint64 {
	v := max(ks.flushed[db], ks.horizon)
	d := ks.dbs[db]
	if e, ok := d.keys[string(key)]; ok && e.Version > v {
		v = e.Version
	}
	if t, ok := d.tombstones[string(key)]; ok && t > v {
		v = t
	}
	return v
}

// TotalKeys returns the number of keys in all databases.
func (ks *Keyspace) TotalKeys() int {
	n := 0
	for _, d := range ks.dbs {
		n += d.Len()
	}
	return n
}

// PruneTombstones forgets deletions recorded before log index horizon.
// Keys without a newer record then count as modified at horizon. It is a
// deterministic function of the log, so every node prunes alike.
func (ks *Keyspace) PruneTombstones(horizon uint64) {
	if horizon <= ks.horizon {
		return
	}
	ks.horizon = horizon
	for _, d := range ks.dbs {
		for k, idx := range d.tombstones {
			if idx < horizon {
				delete(d.tombstones, k)
				delete(d.expiredDel, k)
			}
		}
	}
}
