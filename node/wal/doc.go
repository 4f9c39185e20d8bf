// Package wal is an append-only, segmented Raft log store: a
// raft.LogStore whose append is one write() per StoreLogs batch.
//
// # Why
//
// With one client sending one write at a time, the log store's append
// latency decides Goblin's speed. raft-boltdb/v2 rewrites B+tree pages
// and its meta page on every batch (60–80 µs without fsync here); an
// append-only file needs one pwrite (a few µs), plus one fdatasync when
// every batch must survive power loss. raft-boltdb stays the stable store
// and a supported log store; node/ chooses between them.
//
// # Layout
//
// The log is a directory of segment files named by the index of their
// first entry (%020d.seg). A segment starts with a 16-byte header (magic,
// base index) followed by batches, one per StoreLogs call:
//
//	batch:  magic u32 | body length u32 | entry count u32 | CRC-32C of the 12 bytes before
//	entry:  length u32 | CRC-32C of the payload u32 | payload
//	payload: index u64 | term u64 | type u8 | appended-at unix ns i64 | extensions length u32 | extensions | data
//
// All integers are little-endian. A batch is written with a single write
// at the end of the active segment; when the segment would grow past its
// size limit the next batch opens a new one (the old one is fsynced
// first, whatever the mode, so only the last segment can have a torn
// tail).
//
// # Index
//
// The in-memory index is, per segment, its base index and a []uint32 of
// entry offsets: no pointers per entry, nothing for the garbage collector
// to scan. GetLog reads the entry back with one pread (the page cache
// serves recent entries); raft's LogCache in front of the store keeps the
// newest entries in memory for followers and replication.
//
// # Durability
//
// With Options.SyncEveryBatch, StoreLogs returns after fdatasync: an
// acknowledged entry survives power loss. Without it, StoreLogs returns
// once the batch is in the kernel (survives kill -9) and the owner calls
// Sync periodically (once a second in goblind's everysec mode); Sync runs
// concurrently with appends, so it never stalls them.
//
// # Recovery
//
// Open scans every segment, checks every CRC and the continuity of
// indexes, and rebuilds the index. Damage in the last segment's final
// batch is a torn write (a crash during the last append, which was never
// acknowledged under SyncEveryBatch): the segment is truncated before it.
// Damage anywhere else — a bad batch followed by a valid one, a bad
// entry inside a batch whose header is valid and ends before the file
// does, a gap between segments — is corruption, and Open fails rather
// than silently dropping acknowledged entries.
//
// # Deletion
//
// Raft deletes a prefix after a snapshot (DeleteRange(first, n)) and, on
// a follower, a conflicting suffix (DeleteRange(n, last)). A prefix
// deletion moves the logical first index and removes whole segments that
// fall below it; a suffix deletion truncates the segment holding n and
// removes those after it. After a restart the first index is the first
// segment's base, so a few entries below the last snapshot may reappear:
// raft never reads them. The store is monotonic (raft.MonotonicLogStore):
// entries must be appended without gaps, and raft empties it before
// installing a snapshot.
package wal
