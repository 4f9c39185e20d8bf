package keyspace

import (
	"github.com/tidwall/btree"

	"github.com/goblindb/goblin/packed"
)

// DB is one numbered database.
type DB struct {
	keys    map[string]*Entry
	expired uint64 // keys removed by expiry (DeleteExpired)
	// order holds every key sorted by (hash, key): SCAN's cursor is a
	// position in it, so a key present for a whole scan is returned.
	order *btree.BTreeG[scanItem]
	// expires holds keys with a time to live, sorted by (time, key), so the
	// leader finds the expired ones without scanning.
	expires *btree.BTreeG[expireItem]
	// tombstones remembers when recently deleted keys were deleted, for
	// WATCH; see Keyspace.Modified and PruneTombstones.
	tombstones map[string]uint64
	// expiredDel holds the tombstoned keys whose last deletion was an
	// expiration (not persisted in snapshots: after a restore such a
	// deletion counts as any other, which only makes WATCH stricter).
	expiredDel map[string]struct{}
	// declared holds the layouts ZCREATE declared for keys that do not
	// exist yet; creating the key consumes its declaration, deleting the
	// key name (DEL, FLUSHDB) drops it.
	declared map[string]packed.Layout
}

type scanItem struct {
	hash uint64
	key  string
}

type expireItem struct {
	at  int64
	key string
}

// scanHash orders keys for SCAN. It is a fixed function (FNV-1a then a
// full-avalanche finalizer), so every node and every restart orders keys
// the same way and a cursor stays meaningful on any node. It is never 0,
// which is the cursor that starts and ends a scan.
func scanHash(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	if h == 0 {
		h = 1
	}
	return h
}

func newDB() *DB {
	opts := btree.Options{NoLocks: true}
	return &DB{
		keys: map[string]*Entry{},
		order: btree.NewBTreeGOptions(func(a, b scanItem) bool {
			if a.hash != b.hash {
				return a.hash < b.hash
			}
			return a.key < b.key
		}, opts),
		expires: btree.NewBTreeGOptions(func(a, b expireItem) bool {
			if a.at != b.at {
				return a.at < b.at
			}
			return a.key < b.key
		}, opts),
		tombstones: map[string]uint64{},
		expiredDel: map[string]struct{}{},
		declared:   map[string]packed.Layout{},
	}
}

// Len returns the number of keys, including expired keys not yet deleted
// (as Redis's DBSIZE does).
func (d *DB) Len() int { return len(d.keys) }

// Expires returns the number of keys with a time to live.
func (d *DB) Expires() int { return d.expires.Len() }

// Get returns the entry for key, or nil when it is absent or expired at
// now (Unix ms). It never changes the database: use it on the read path.
func (d *DB) Get(key []byte, now int64) *Entry {
	e := d.keys[string(key)]
	if e == nil || e.Expired(now) {
		return nil
	}
	return e
}

// GetForWrite returns the entry for key, deleting it first if it expired at
// now (the entry's log time). Use it on the apply path only.
func (d *DB) GetForWrite(key []byte, now int64, idx uint64) *Entry {
	e := d.keys[string(key)]
	if e == nil {
		return nil
	}
	if e.Expired(now) {
		d.DeleteExpired(key, idx)
		return nil
	}
	return e
}

// Set stores e under key, replacing any previous entry, and stamps it with
// log index idx. e.ExpireAt is honoured.
func (d *DB) Set(key []byte, e *Entry, idx uint64) {
	k := string(key)
	if old, ok := d.keys[k]; ok {
		if old.ExpireAt != 0 {
			d.expires.Delete(expireItem{old.ExpireAt, k})
		}
	} else {
		d.order.Set(scanItem{scanHash(k), k})
		delete(d.declared, k)
	}
	d.keys[k] = e
	delete(d.tombstones, k)
	delete(d.expiredDel, k)
	if e.ExpireAt != 0 {
		d.expires.Set(expireItem{e.ExpireAt, k})
	}
	e.Version = idx
}

// Delete removes key at log index idx and reports whether it existed.
func (d *DB) Delete(key []byte, idx uint64) bool {
	k := string(key)
	delete(d.declared, k)
	e, ok := d.keys[k]
	if !ok {
		return false
	}
	delete(d.keys, k)
	d.order.Delete(scanItem{scanHash(k), k})
	if e.ExpireAt != 0 {
		d.expires.Delete(expireItem{e.ExpireAt, k})
	}
	d.tombstones[k] = idx
	delete(d.expiredDel, k)
	return true
}

// DeleteExpired removes key, whose time has come, at log index idx.
func (d *DB) DeleteExpired(key []byte, idx uint64) bool {
	if !d.Delete(key, idx) {
		return false
	}
	d.expiredDel[string(key)] = struct{}{}
	d.expired++
	return true
}

// ExpiredKeys returns how many keys expired in this database since the
// node started (INFO expired_keys).
func (d *DB) ExpiredKeys() uint64 { return d.expired }

// SetExpire sets (at > 0) or clears (at == 0) key's expiry time.
func (d *DB) SetExpire(key []byte, at int64, idx uint64) {
	k := string(key)
	e := d.keys[k]
	if e == nil {
		return
	}
	if e.ExpireAt != 0 {
		d.expires.Delete(expireItem{e.ExpireAt, k})
	}
	e.ExpireAt = at
	if at != 0 {
		d.expires.Set(expireItem{at, k})
	}
	e.Version = idx
}

// Touch records that key's value changed at log index idx.
func (d *DB) Touch(key []byte, idx uint64) {
	if e := d.keys[string(key)]; e != nil {
		e.Version = idx
	}
}

// Each calls fn for every key that is not expired at now, in SCAN order,
// until fn returns false. The order is the same on every node, so what a
// command applied through the log answers (KEYS) is too.
func (d *DB) Each(now int64, fn func(key string, e *Entry) bool) {
	d.order.Scan(func(it scanItem) bool {
		e := d.keys[it.key]
		if e.Expired(now) {
			return true
		}
		return fn(it.key, e)
	})
}

// EachUnordered is Each in no particular order, for totals that do not
// depend on it (INFO, metrics): a tenth of Each's time, which matters
// under the read lock that holds writes back.
func (d *DB) EachUnordered(now int64, fn func(key string, e *Entry) bool) {
	for k, e := range d.keys {
		if e.Expired(now) {
			continue
		}
		if !fn(k, e) {
			return
		}
	}
}

// Scan visits keys from cursor on in SCAN order, calling fn for each key
// (expired ones included; callers filter), and stops once it has visited
// count keys and the next key's hash differs from the last one's, so keys
// sharing a hash are never split across calls. It returns the cursor to
// continue from, 0 when the scan is complete.
func (d *DB) Scan(cursor uint64, count int, fn func(key string, e *Entry)) uint64 {
	n := 0
	var next, last uint64
	d.order.Ascend(scanItem{hash: cursor}, func(it scanItem) bool {
		if n >= count && it.hash != last {
			next = it.hash
			return false
		}
		fn(it.key, d.keys[it.key])
		last = it.hash
		n++
		return true
	})
	return next
}

// ExpiredBefore returns up to max keys whose expiry time is <= now.
func (d *DB) ExpiredBefore(now int64, max int) []ExpiredKey {
	var out []ExpiredKey
	d.expires.Scan(func(it expireItem) bool {
		if it.at > now || len(out) >= max {
			return false
		}
		out = append(out, ExpiredKey{Key: it.key, At: it.at})
		return true
	})
	return out
}

// ExpiredKey names a key and the expiry time it had when found.
type ExpiredKey struct {
	Key string
	At  int64
}

// RandomKey returns a key chosen by r (0 <= r < 1 scaled over the scan
// order), or "" when the database is empty.
func (d *DB) RandomKey(r uint64) (string, bool) {
	n := d.order.Len()
	if n == 0 {
		return "", false
	}
	it, _ := d.order.GetAt(int(r % uint64(n)))
	return it.key, true
}

// Peek returns key's entry even if it has expired, or nil.
func (d *DB) Peek(key []byte) *Entry { return d.keys[string(key)] }

// Declare records the layout key gets when it is next created (ZCREATE).
func (d *DB) Declare(key []byte, l packed.Layout) { d.declared[string(key)] = l }

// Undeclare drops key's declared layout, if any.
func (d *DB) Undeclare(key []byte) { delete(d.declared, string(key)) }

// Declared returns the layout declared for key, if any.
func (d *DB) Declared(key []byte) (packed.Layout, bool) {
	l, ok := d.declared[string(key)]
	return l, ok
}
