package keyspace

import (
	"cmp"
	"slices"
	"sync"

	"github.com/goblindb/goblin/packed"
)

// View is a read-only point-in-time image of a keyspace: what a snapshot
// or a backup writes, taken in a moment and then read on any goroutine
// while the keyspace goes on changing.
//
// Taking one copies no member: each set gives a packed.View, which shares
// the set's leaves copy-on-write. What is copied is per key (the name, a
// reference to the set's view, the expiry and the version) and the
// databases' tombstones and declarations. So a view of 10,000,000 members
// in one key costs about 25,000 leaf headers, and one of 1,000,000 keys
// costs a pass over the 1,000,000 keys (see docs/operations.md for both).
// Keys are kept in map order; Each sorts them into SCAN order on first
// use, on the reader's goroutine.
type View struct {
	rules   Rules
	flushed [NumDBs]uint64
	horizon uint64
	dbs     [NumDBs]dbView
}

// ViewEntry is one key in a View.
type ViewEntry struct {
	Key      string
	Z        *packed.View
	ExpireAt int64  // Unix milliseconds; 0 means no expiry
	Version  uint64 // log index of the last modification
}

type dbView struct {
	keys       []ViewEntry
	tombstones []viewTombstone
	declared   []viewDeclared
	// order is the keys' SCAN order (indexes into keys), made by the
	// first Each.
	sortOnce sync.Once
	order    []int
}

type viewTombstone struct {
	key      string
	idx      uint64
	byExpiry bool
}

type viewDeclared struct {
	key    string
	layout packed.Layout
}

// Snapshot returns a view of the keyspace as it is now. The caller holds
// the write lock (Lock, not RLock: taking a view marks the sets' leaves
// as shared); once it returns, the keyspace may change.
func (ks *Keyspace) Snapshot() *View {
	v := &View{rules: slices.Clone(ks.rules), flushed: ks.flushed, horizon: ks.horizon}
	for i, d := range ks.dbs {
		dv := &v.dbs[i]
		dv.keys = make([]ViewEntry, 0, len(d.keys))
		for k, e := range d.keys {
			dv.keys = append(dv.keys, ViewEntry{Key: k, Z: e.Z.Snapshot(), ExpireAt: e.ExpireAt, Version: e.Version})
		}
		dv.tombstones = make([]viewTombstone, 0, len(d.tombstones))
		for k, idx := range d.tombstones {
			_, byExpiry := d.expiredDel[k]
			dv.tombstones = append(dv.tombstones, viewTombstone{k, idx, byExpiry})
		}
		dv.declared = make([]viewDeclared, 0, len(d.declared))
		for k, l := range d.declared {
			dv.declared = append(dv.declared, viewDeclared{k, l})
		}
	}
	return v
}

// Rules returns the packed-layout rules the keyspace had.
func (v *View) Rules() Rules { return v.rules }

// Len returns the number of keys database db had.
func (v *View) Len(db int) int { return len(v.dbs[db].keys) }

// Each calls fn for every key of database db in SCAN order (the order
// DB.Scan visits them), expired or not. The first call for a database
// sorts its keys (into an index of its own: the view's keys never move,
// so other readers may use it meanwhile).
func (v *View) Each(db int, fn func(e *ViewEntry)) {
	d := &v.dbs[db]
	d.sortOnce.Do(func() {
		type item struct {
			hash uint64
			i    int
		}
		items := make([]item, len(d.keys))
		for i := range d.keys {
			items[i] = item{scanHash(d.keys[i].Key), i}
		}
		slices.SortFunc(items, func(a, b item) int {
			if c := cmp.Compare(a.hash, b.hash); c != 0 {
				return c
			}
			return cmp.Compare(d.keys[a.i].Key, d.keys[b.i].Key)
		})
		d.order = make([]int, len(items))
		for j, it := range items {
			d.order[j] = it.i
		}
	})
	for _, i := range d.order {
		fn(&d.keys[i])
	}
}
