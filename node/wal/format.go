package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/bulkcopy"
)

// version is a segment's format version, named by the last byte of its
// magic. Version 2 segments carry a sync mark in their header and the
// synced offset in every batch header; version 1 segments (written by
// earlier builds) are read, cut back and deleted but never appended to.
type version uint8

const (
	v1 version = 1
	v2 version = 2
)

const (
	segmentMagicPrefix = "GOBLWAL" // then the version byte, then the base index u64
	segHeaderLenV1     = 16
	// A version 2 segment header: magic (8), base index u64, then the
	// sync mark: synced offset u64, CRC-32C of the base and the synced
	// offset u32, zero u32.
	segHeaderLenV2 = 32
	markOff        = 16
	markLen        = 16

	batchMagicV1 = 0x31425747 // "GWB1"
	batchMagicV2 = 0x32425747 // "GWB2"
	// batch header v1: magic u32 | body length u32 | entry count u32 | CRC u32
	// batch header v2: magic u32 | body length u32 | entry count u32 | synced u32 | CRC u32
	batchHdrLenV1 = 16
	batchHdrLenV2 = 20

	entryHdrLen  = 8
	payloadFixed = 8 + 8 + 1 + 8 + 4
	// maxBatchBody bounds a batch (and so one entry) to keep a corrupt
	// length from making recovery allocate wildly. StoreLogs splits
	// entries that together pass it into several batches.
	maxBatchBody = 1 << 30
	// maxSegmentSize bounds Options.SegmentSize so that every offset in a
	// segment (a full segment plus one maximal batch) fits the u32 offsets
	// of the index and of batch headers.
	maxSegmentSize = 1 << 30
)

// MaxEntryData is the most an entry's Data and Extensions may hold
// together: one entry fills a batch at most.
const MaxEntryData = maxBatchBody - entryHdrLen - payloadFixed

// ErrEntryTooLarge is returned by StoreLogs for an entry over
// MaxEntryData; nothing of the call is stored.
var ErrEntryTooLarge = errors.New("wal: entry too large")

// recordLen is what entry e takes in a batch.
func recordLen(e *raft.Log) int {
	return entryHdrLen + payloadFixed + len(e.Extensions) + len(e.Data)
}

func (v version) segHeaderLen() int {
	if v == v1 {
		return segHeaderLenV1
	}
	return segHeaderLenV2
}

func (v version) batchHdrLen() int {
	if v == v1 {
		return batchHdrLenV1
	}
	return batchHdrLenV2
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is returned by Open when the log is damaged in a way a crash
// cannot explain (see the package documentation), and by GetLog when an
// entry fails its checksum.
var ErrCorrupt = errors.New("wal: corrupt log")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// segmentHeader returns a new version 2 segment's header, its sync mark
// saying the header itself is synced.
func segmentHeader(base uint64) []byte {
	b := make([]byte, segHeaderLenV2)
	copy(b, segmentMagicPrefix)
	b[7] = byte(v2)
	binary.LittleEndian.PutUint64(b[8:], base)
	putMark(b[markOff:markOff+markLen], base, segHeaderLenV2)
	return b
}

// parseSegmentHeader checks a segment header against the base its file
// name gives, and returns its version.
func parseSegmentHeader(b []byte, base uint64) (version, bool) {
	if len(b) < segHeaderLenV1 || string(b[:7]) != segmentMagicPrefix || binary.LittleEndian.Uint64(b[8:]) != base {
		return 0, false
	}
	switch v := version(b[7]); v {
	case v1:
		return v, true
	case v2:
		return v, len(b) >= segHeaderLenV2
	}
	return 0, false
}

// versionDamaged reports whether segment b's layout contradicts the
// version v its header names, which only damage to the version byte
// explains (a crash never rewrites it once the header is durable).
// Read as the wrong version, every batch would look like a torn tail and
// be cut. A version 2 segment holds a valid sync mark at byte 16, or its
// first batch (version 2 magic) at byte 32; a version 1 segment holds its
// first batch (version 1 magic and header checksum) at byte 16.
func versionDamaged(b []byte, base uint64, v version) bool {
	if len(b) < segHeaderLenV2 {
		return false
	}
	_, markOK := parseMark(b, base)
	if v == v1 {
		return markOK || len(b) >= segHeaderLenV2+4 && binary.LittleEndian.Uint32(b[segHeaderLenV2:]) == batchMagicV2
	}
	_, _, _, isV1 := batchHeader(b[segHeaderLenV1:], v1)
	return !markOK && isV1
}

// putMark encodes a sync mark: bytes [0, synced) of the segment are on
// stable storage. The checksum covers the segment's base too.
func putMark(m []byte, base uint64, synced int64) {
	binary.LittleEndian.PutUint64(m, base)
	h := crc32.Update(0, castagnoli, m[:8])
	binary.LittleEndian.PutUint64(m, uint64(synced))
	binary.LittleEndian.PutUint32(m[8:], crc32.Update(h, castagnoli, m[:8]))
	binary.LittleEndian.PutUint32(m[12:], 0)
}

// parseMark returns the synced offset a version 2 header's sync mark
// records, or false if the mark is damaged.
func parseMark(hdr []byte, base uint64) (int64, bool) {
	m := hdr[markOff : markOff+markLen]
	h := crc32.Update(0, castagnoli, binary.LittleEndian.AppendUint64(nil, base))
	if crc32.Update(h, castagnoli, m[:8]) != binary.LittleEndian.Uint32(m[8:]) {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(m)), true
}

// appendBatch appends logs as one version 2 batch to dst, recording that
// the segment was synced up to offset synced when it was written, and
// appends each entry's offset relative to the start of the batch to offs.
func appendBatch(dst []byte, logs []*raft.Log, synced uint32, offs []uint32) ([]byte, []uint32) {
	start := len(dst)
	dst = append(dst, make([]byte, batchHdrLenV2)...)
	for _, l := range logs {
		offs = append(offs, uint32(len(dst)-start))
		n := payloadFixed + len(l.Extensions) + len(l.Data)
		at := len(dst)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		dst = append(dst, 0, 0, 0, 0) // CRC, filled below
		p := len(dst)
		dst = binary.LittleEndian.AppendUint64(dst, l.Index)
		dst = binary.LittleEndian.AppendUint64(dst, l.Term)
		dst = append(dst, byte(l.Type))
		var ns int64
		if !l.AppendedAt.IsZero() {
			ns = l.AppendedAt.UnixNano()
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(ns))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(l.Extensions)))
		dst = append(dst, l.Extensions...)
		dst = bulkcopy.Append(dst, l.Data)
		binary.LittleEndian.PutUint32(dst[at+4:], bulkcopy.Checksum(0, castagnoli, dst[p:]))
	}
	putBatchHeader(dst[start:start+batchHdrLenV2], v2, uint32(len(dst)-start-batchHdrLenV2), uint32(len(logs)), synced)
	return dst, offs
}

func putBatchHeader(h []byte, v version, body, count, synced uint32) {
	binary.LittleEndian.PutUint32(h[4:], body)
	binary.LittleEndian.PutUint32(h[8:], count)
	if v == v1 {
		binary.LittleEndian.PutUint32(h[0:], batchMagicV1)
		binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(h[:12], castagnoli))
		return
	}
	binary.LittleEndian.PutUint32(h[0:], batchMagicV2)
	binary.LittleEndian.PutUint32(h[12:], synced)
	binary.LittleEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
}

// batchHeader parses a batch header of version v: body length, entry
// count, and (version 2) the synced offset it records.
func batchHeader(b []byte, v version) (body, count, synced uint32, ok bool) {
	n := v.batchHdrLen()
	if len(b) < n {
		return 0, 0, 0, false
	}
	magic := uint32(batchMagicV2)
	if v == v1 {
		magic = batchMagicV1
	}
	if binary.LittleEndian.Uint32(b) != magic ||
		crc32.Checksum(b[:n-4], castagnoli) != binary.LittleEndian.Uint32(b[n-4:]) {
		return 0, 0, 0, false
	}
	body, count = binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
	if v == v2 {
		synced = binary.LittleEndian.Uint32(b[12:])
	}
	return body, count, synced, body <= maxBatchBody
}

// entryLen returns the full length (header included) of the entry at the
// start of b, after checking it fits in b.
func entryLen(b []byte) (int, bool) {
	if len(b) < entryHdrLen {
		return 0, false
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < payloadFixed || n > len(b)-entryHdrLen {
		return 0, false
	}
	return entryHdrLen + n, true
}

// decodeEntry decodes the entry that is exactly b into l. l.Data and
// l.Extensions alias b.
func decodeEntry(b []byte, l *raft.Log) error {
	n, ok := entryLen(b)
	if !ok || n != len(b) {
		return corruptf("bad entry length")
	}
	p := b[entryHdrLen:]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return corruptf("entry checksum mismatch")
	}
	l.Index = binary.LittleEndian.Uint64(p)
	l.Term = binary.LittleEndian.Uint64(p[8:])
	l.Type = raft.LogType(p[16])
	ns := int64(binary.LittleEndian.Uint64(p[17:]))
	l.AppendedAt = time.Time{}
	if ns != 0 {
		l.AppendedAt = time.Unix(0, ns)
	}
	ext := int(binary.LittleEndian.Uint32(p[25:]))
	rest := p[payloadFixed:]
	if ext > len(rest) {
		return corruptf("bad extensions length")
	}
	l.Extensions = nil
	if ext > 0 {
		l.Extensions = rest[:ext:ext]
	}
	l.Data = rest[ext:]
	if len(l.Data) == 0 {
		l.Data = nil
	}
	return nil
}

// entryIndex returns the index recorded in a checked entry.
func entryIndex(b []byte) uint64 { return binary.LittleEndian.Uint64(b[entryHdrLen:]) }
