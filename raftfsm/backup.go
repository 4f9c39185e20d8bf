package raftfsm

// SnapshotVersion is the version of the snapshot format WriteSnapshot
// writes (the last byte of its magic). A backup records it, so a reader
// can tell a backup written by a newer build from a damaged one.
var SnapshotVersion = snapshotMagic[7]

// Capture returns the state as it is now, for a snapshot, a backup or a
// digest, from any goroutine: a view of the keyspace (keyspace.View),
// taken under the keyspace's write lock (applies and reads wait only
// while it is taken: no member is copied), whose Index is the last entry
// applied to it. Nothing changes the view afterwards.
func (f *FSM) Capture() *State {
	ks := f.KS()
	ks.Lock()
	defer ks.Unlock()
	// ApplyBatch and Restore publish the applied index before they release
	// the keyspace, so under the lock it is the view's index.
	return &State{view: ks.Snapshot(), Now: f.applier.now, Index: f.applied.Load(), acl: f.applier.acl.clone()}
}
