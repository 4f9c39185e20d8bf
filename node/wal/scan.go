package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// scanSegment checks the batches of a segment file's bytes b, whose first
// entry must have index base, and returns the offsets of its entries and
// the end of its last good batch. Damage in a last segment's final batch
// is a torn write: scanning stops before it (end < len(b)). Any other
// damage is ErrCorrupt.
func scanSegment(b []byte, base uint64, last bool) (offs []uint32, end int, err error) {
	off := segHeaderLen
	next := base
	for off < len(b) {
		body, count, ok := batchHeader(b[off:])
		batchEnd := off + batchHdrLen + int(body)
		if !ok || batchEnd > len(b) {
			// The header is damaged or the batch runs past the end of the
			// file: a torn final write, unless a valid batch follows.
			if !last || validBatchAfter(b, off+1) {
				return nil, 0, corruptf("segment %d: damaged batch at offset %d", base, off)
			}
			return offs, off, nil
		}
		start := len(offs)
		p := off + batchHdrLen
		bad := false
		for range count {
			n, ok := entryLen(b[p:batchEnd])
			if !ok || crc32.Checksum(b[p+entryHdrLen:p+n], castagnoli) != binary.LittleEndian.Uint32(b[p+4:]) {
				bad = true
				break
			}
			if idx := entryIndex(b[p:]); idx != next {
				return nil, 0, corruptf("segment %d: entry at offset %d has index %d, want %d", base, p, idx, next)
			}
			offs = append(offs, uint32(p))
			next++
			p += n
		}
		if bad || p != batchEnd {
			// A batch with a valid header is damaged inside. It can be a
			// torn write only if it is the last thing in the file.
			if !last || batchEnd < len(b) {
				return nil, 0, corruptf("segment %d: damaged entry in the batch at offset %d", base, off)
			}
			return offs[:start], off, nil
		}
		off = batchEnd
	}
	return offs, off, nil
}

// validBatchAfter reports whether a batch with a valid header and valid
// first entry starts anywhere at or after from.
func validBatchAfter(b []byte, from int) bool {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], batchMagic)
	for i := from; i+batchHdrLen <= len(b); i++ {
		if b[i] != magic[0] || b[i+1] != magic[1] || b[i+2] != magic[2] || b[i+3] != magic[3] {
			continue
		}
		body, count, ok := batchHeader(b[i:])
		if !ok || count == 0 || i+batchHdrLen+int(body) > len(b) {
			continue
		}
		p := i + batchHdrLen
		if n, ok := entryLen(b[p : p+int(body)]); ok &&
			crc32.Checksum(b[p+entryHdrLen:p+n], castagnoli) == binary.LittleEndian.Uint32(b[p+4:]) {
			return true
		}
	}
	return false
}
