// Package backup is Goblin's backup file format and its state digest.
//
// # The digest
//
// A digest names a state: SHA-256 over a stream that spells out every
// key of every database and every ACL user, in an order every node agrees
// on. Two nodes at the same applied index have equal digests; a restored
// cluster has its backup's digest until something writes to it. The
// stream is, after the line "goblin-digest-1\n":
//
//	for each of the 16 databases, in order:
//	  [keys uvarint], then for each key in SCAN order (keyspace.DB.Scan,
//	  a fixed hash of the name, so the same on every node):
//	    [name] [layout u8] [expire-at varint, Unix ms, 0 for none]
//	    [members uvarint], then each member in rank order:
//	      [member text] [score: IEEE-754 float64 bits, little-endian]
//	[has users u8]; with users, [users uvarint], then by name:
//	  [name] [rules] [selectors uvarint] {[rules]}
//
// where [x] is a uvarint length and the bytes, and [rules] a uvarint
// count of such strings (acl.UserState: the rules that rebuild the user
// exactly, passwords as their hashes). Keys that have expired but whose
// deletion is not applied yet are in the state, and in the digest. What
// the digest leaves out is bookkeeping that no reply shows: each key's
// modification index and the deletions remembered for WATCH, layouts
// declared by ZCREATE for keys not created yet, the packed-layout rules
// (each leader replicates its own --packed flags), and which node's
// operator ACL configuration the state has applied.
//
// Digest streams: it walks the state once, hashing through a 64 KiB
// buffer, so its memory does not grow with the state; on a live node it
// runs on a Capture, a frozen view of the state (keyspace.View) that
// copies no member, so applies wait only while the view is taken and a
// backup never blocks them while it is written.
//
// # The file
//
//	magic "GOBLINBK" | version u8 | header length u32 | header | CRC-32C u32
//	body: the raftfsm snapshot of the state, gzip-compressed
//	trailer: body length u64 | snapshot length u64 | CRC-32C u32
//
// Integers in the fixed parts are little-endian. The first CRC covers
// the prefix and the header, so a reader can print a file's metadata
// (ReadMeta) without reading it whole; the last covers every byte before
// it. The header (format.go) records when and on which node the backup
// was taken, the log index and term the state is at, its digest, the
// snapshot format's version, the counts of keys, expiring keys, members
// and users, keys and members per layout, and the packed-layout rules.
//
// The body is exactly the snapshot a node's state machine writes and
// restores (raftfsm.WriteSnapshot), so a restore hands it to hashicorp/
// raft's Raft.Restore unchanged in format, and every version of the
// snapshot format a node reads is a backup it can restore. Compression
// is the standard library's gzip at its fastest level: snapshots of
// packed sets are mostly fixed-width numbers, and the link or disk is
// rarely slower than that.
//
// Read verifies everything before it returns a state: both checksums,
// gzip's own, the snapshot's (decoding every set, which checks each one's
// structure), the lengths in the trailer, the index, and the digest
// recomputed from the decoded state. A flipped byte or a file cut short
// anywhere is refused with ErrCorrupt; a file of a later format version
// with ErrVersion.
package backup
