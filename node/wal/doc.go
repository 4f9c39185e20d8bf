// Package wal is an append-only, segmented Raft log store: a
// raft.LogStore whose append is one write() per StoreLogs batch, or on
// Linux one copy into a mapping of the zeros written ahead of it
// (mapped_linux.go).
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
// first entry (%020d.seg), and a manifest. A segment starts with a 32-byte
// header followed by batches, one per StoreLogs call:
//
//	header:  "GOBLWAL" version u8 (2) | base index u64 | sync mark
//	mark:    synced offset u64 | CRC-32C of the base index and synced offset u32 | zero u32
//	batch:   magic u32 | body length u32 | entry count u32 | synced offset u32 | CRC-32C of the 16 bytes before
//	entry:   length u32 | CRC-32C of the payload u32 | payload
//	payload: index u64 | term u64 | type u8 | appended-at unix ns i64 | extensions length u32 | extensions | data
//
// All integers are little-endian. A batch is written at once at the end
// of the active segment; when the segment would grow past its
// size limit the next batch opens a new one (the old one is fsynced
// first, whatever the mode, so only the last segment can have a torn
// tail).
//
// The synced offsets record what is known to be on stable storage: each
// batch header carries the synced offset as it was when the batch was
// written, and the header's sync mark is rewritten in place within 10 ms
// of a fdatasync, at most about once per 10 ms while appends go on
// (mark.go tells why and when). Neither costs an fsync of its own: the
// mark reaches the disk with the segment's next fdatasync (and at Close),
// and until then it can only be stale, never claim too much.
//
// The manifest (manifest.go) names the last segment, so a missing tail
// segment is noticed.
//
// Segments of version 1 (16-byte header, no sync mark, 16-byte batch
// headers without the synced offset; written by earlier builds) are read,
// deleted and cut back like the others, but never appended to: the first
// append after opening such a log starts a version 2 segment.
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
// concurrently with appends, so it never stalls them. With
// Options.SyncBeside the fdatasync is submitted through Linux AIO and
// waited for in Go's poller, so that the thread is not held while the
// disk syncs (aiosync_linux.go); the guarantee is the same.
//
// # Recovery
//
// Open scans every segment forward, checks every CRC and the continuity of
// indexes, and rebuilds the index. It reads structure only where Goblin's
// own lengths point, and never searches damaged bytes for something that
// looks like a batch: they may be a client's data, and a ZADD member can
// hold any bytes, including a whole valid batch. What damage means is
// decided by what the segment records as synced (the sync mark, the
// batch headers' synced offsets, and the header of the batch right after
// a damaged one whose own header is intact):
//
//   - damage in the last segment at or after the synced offset is a write
//     a crash interrupted (never acknowledged under SyncEveryBatch; under
//     everysec, what a power loss may take): the segment is cut there,
//     with a warning naming what was cut;
//   - damage below the synced offset (a flipped bit in an acknowledged
//     batch, the final one included once the mark or a later batch
//     records it synced), damage after a damaged sync mark
//     (whether it was synced is then unknown), damage in any segment but the last,
//     a segment shorter than its synced offset, a gap between segments,
//     or a missing last segment is ErrCorrupt, and Open fails rather than
//     silently drop acknowledged entries.
//
// A segment of version 1 records nothing synced: damage in its tail is
// cut as torn.
//
// # Failed writes
//
// When an append's write or fdatasync fails (ENOSPC, EIO), StoreLogs cuts
// whatever part of the batch reached the file and fsyncs the cut before
// returning the error, so the log is exactly what it was and a refused
// batch cannot reappear after a crash; the next append simply tries
// again. If the cut fails too, the next append repeats it before writing.
// A failed Sync leaves the entries counted as unsynced, and the next Sync
// tries again. Options.Inject plays these failures in tests.
//
// # Deletion
//
// Raft deletes a prefix after a snapshot (DeleteRange(first, n)) and, on
// a follower, a conflicting suffix (DeleteRange(n, last)). A prefix
// deletion moves the logical first index and removes whole segments that
// fall below it; a suffix deletion records the new last segment in the
// manifest, removes the segments after it, lowers the sync mark of the
// segment holding n (durably) and then truncates it, so a crash midway
// never leaves a mark claiming bytes that are gone. A cut that fails
// leaves the index as it was and appends refused until the deletion is
// tried again; segment files that could not be removed are removed
// before the next segment is created. After a restart the first index is
// the first segment's base, so a few entries below the last snapshot may
// reappear: raft never reads them. The store is monotonic
// (raft.MonotonicLogStore): entries must be appended without gaps, and
// raft empties it before installing a snapshot.
package wal
