package keyspace

// WATCH support. Redis marks a client dirty when a key it watches is
// modified, deleted, expired, or flushed while it exists; Goblin decides the
// same at EXEC, in the state machine, from what the keyspace remembers:
// each key's version (the log index of its last change), tombstones for
// recent deletions (noting those that were expirations), each database's
// last flush, and what the client saw when it watched.

// TombstoneWindow is how many log entries a deletion is remembered for.
// A watch older than that aborts EXEC conservatively.
const TombstoneWindow = 1 << 20

// Watch is what a client recorded about a key when it watched it.
type Watch struct {
	Since   uint64 // the log index the client had seen
	Existed bool   // the key existed and had not expired
	Expired bool   // the key was present but its time had come
}

// WatchState returns what WATCH records about key at now (Unix ms).
func (ks *Keyspace) WatchState(db int, key []byte, now int64) (existed, expired bool) {
	e := ks.dbs[db].keys[string(key)]
	if e == nil {
		return false, false
	}
	if e.Expired(now) {
		return false, true
	}
	return true, false
}

// Changed reports whether Redis would abort an EXEC watching key with w:
// the key changed after w.Since (its deletion by expiry does not count for
// a key that was already expired when watched), it was flushed while it
// existed, or it has expired since it was watched.
func (ks *Keyspace) Changed(db int, key []byte, w Watch, now int64) bool {
	if w.Since < ks.horizon || (ks.flushed[db] > w.Since && ks.flushed[db]-w.Since > TombstoneWindow) {
		return true // changes that old are forgotten: be safe
	}
	d := ks.dbs[db]
	k := string(key)
	e := d.keys[k]
	if e != nil && e.Version > w.Since {
		return true
	}
	if t, ok := d.tombstones[k]; ok && t > w.Since {
		if _, byExpiry := d.expiredDel[k]; !byExpiry || !w.Expired {
			return true
		}
	}
	if ks.flushed[db] > w.Since && w.Existed {
		return true
	}
	return !w.Expired && e != nil && e.Expired(now)
}

// recentSince is the oldest version a flush must remember the keys of:
// watches older than the tombstone window abort anyway.
func (ks *Keyspace) recentSince(idx uint64) uint64 {
	return max(ks.horizon, idx-min(idx, TombstoneWindow))
}
