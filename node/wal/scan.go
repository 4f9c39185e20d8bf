package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// scanResult is what scanning a segment's bytes finds.
type scanResult struct {
	offs   []uint32 // file offset of each entry, in index order
	end    int      // end of the last good batch: where a torn tail starts
	synced int64    // the largest synced offset the segment records
	// markBad is set when a version 2 segment's sync mark fails its
	// checksum (the batch headers' synced offsets still count).
	markBad bool
	// zeros: everything from end on is zero bytes, written ahead of the
	// appends (prealloc.go), not a torn write.
	zeros bool
}

// scanSegment checks the batches of a segment file's bytes b (of version
// v, header already checked), whose first entry must have index base.
//
// It reads forward only, from lengths Goblin wrote, and never searches
// the bytes after a damaged batch for something that looks like a batch:
// those bytes may be a client's data. Damage is told apart by what the
// segment records as synced (the header's sync mark, the synced offset in
// each batch header, and in the header of the batch right after a damaged
// one whose own header is intact):
//
//   - damage below the synced offset, anywhere in a segment that is not
//     the last, damage in a segment whose sync mark is damaged too (what
//     was synced is then unknown), or a file shorter than its synced
//     offset: ErrCorrupt;
//   - otherwise (the last segment, damage at or after the synced offset):
//     a write that a crash interrupted. Scanning stops before it
//     (end < len(b)) and the caller cuts it, unless every byte from there
//     on is zero: the preallocated end of the log (zeros), which the
//     caller keeps. A batch written there and lost in the crash was never
//     synced, so never acknowledged under SyncEveryBatch.
func scanSegment(b []byte, base uint64, v version, last bool) (scanResult, error) {
	var r scanResult
	hlen := v.batchHdrLen()
	if v == v2 {
		if m, ok := parseMark(b, base); ok {
			r.synced = m
		} else {
			r.markBad = true
		}
	}
	off := v.segHeaderLen()
	next := base
	for off < len(b) {
		body, count, synced, ok := batchHeader(b[off:], v)
		batchEnd := off + hlen + int(body)
		if ok && batchEnd <= len(b) && batchOK(b[off+hlen:batchEnd], count) {
			for p := off + hlen; p < batchEnd; {
				if idx := entryIndex(b[p:]); idx != next {
					// Whole and checksummed, so written as it is: no
					// crash explains a wrong index.
					return r, corruptf("segment %d: entry at offset %d has index %d, want %d", base, p, idx, next)
				}
				n, _ := entryLen(b[p:batchEnd])
				r.offs = append(r.offs, uint32(p))
				next++
				p += n
			}
			r.synced = max(r.synced, int64(synced))
			off = batchEnd
			continue
		}
		// A damaged batch. If its header is intact, the batch after it
		// (if any) tells whether it had been synced.
		if ok && batchEnd+hlen <= len(b) {
			if _, _, after, ok := batchHeader(b[batchEnd:], v); ok {
				r.synced = max(r.synced, int64(after))
			}
		}
		r.zeros = allZero(b[off:])
		switch {
		case !last:
			return r, corruptf("segment %d: damaged batch at offset %d in a sealed segment", base, off)
		case int64(off) < r.synced:
			return r, corruptf("segment %d: damaged batch at offset %d, which was synced (the segment is synced up to offset %d)", base, off, r.synced)
		case r.markBad && !r.zeros:
			// Without the mark, what was synced is known only up to the
			// last intact batch: the damage may be in an acknowledged one.
			return r, corruptf("segment %d: damaged batch at offset %d, and the sync mark that would tell whether it was synced is damaged too", base, off)
		}
		r.end = off
		return r, nil
	}
	if int64(len(b)) < r.synced {
		return r, corruptf("segment %d: %d bytes long, but synced up to offset %d: its end is missing", base, len(b), r.synced)
	}
	r.end = off
	return r, nil
}

// batchOK checks a batch body: count entries, each whole and matching its
// checksum, filling the body exactly.
func batchOK(body []byte, count uint32) bool {
	p := 0
	for range count {
		n, ok := entryLen(body[p:])
		if !ok || crc32.Checksum(body[p+entryHdrLen:p+n], castagnoli) != binary.LittleEndian.Uint32(body[p+4:]) {
			return false
		}
		p += n
	}
	return p == len(body)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
