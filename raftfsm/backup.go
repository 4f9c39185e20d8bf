package raftfsm

// SnapshotVersion is the version of the snapshot format WriteSnapshot
// writes (the last byte of its magic). A backup records it, so a reader
// can tell a backup written by a newer build from a damaged one.
var SnapshotVersion = snapshotMagic[7]

// Capture returns the state as it is now, for a backup or a digest,
// from any goroutine: a copy taken under the keyspace's read lock (applies
// wait only while it is copied), whose Index is the last entry applied to
// it. The copy is the caller's: nothing else changes it.
func (f *FSM) Capture() *State {
	ks := f.KS()
	ks.RLock()
	defer ks.RUnlock()
	// ApplyBatch and Restore publish the applied index before they release
	// the keyspace, so under the read lock it is the copy's index.
	return &State{KS: ks.Clone(), Now: f.A.now, Index: f.applied.Load(), acl: f.A.acl.clone()}
}
