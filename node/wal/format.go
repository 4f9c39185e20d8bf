package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/hashicorp/raft"
)

const (
	segmentMagic = "GOBLWAL\x01" // 8 bytes, then the base index u64
	segHeaderLen = 16
	batchMagic   = 0x31425747 // "GWB1"
	batchHdrLen  = 16
	entryHdrLen  = 8
	payloadFixed = 8 + 8 + 1 + 8 + 4
	// maxBatchBody bounds a batch (and so one entry) to keep a corrupt
	// length from making recovery allocate wildly.
	maxBatchBody = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is returned by Open when the log is damaged somewhere other
// than a torn final write, and by GetLog when an entry fails its checksum.
var ErrCorrupt = errors.New("wal: corrupt log")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func segmentHeader(base uint64) []byte {
	b := make([]byte, segHeaderLen)
	copy(b, segmentMagic)
	binary.LittleEndian.PutUint64(b[8:], base)
	return b
}

// appendBatch appends logs as one batch to dst and, for each entry, its
// offset relative to the start of dst's batch to offs.
func appendBatch(dst []byte, logs []*raft.Log, offs []uint32) ([]byte, []uint32) {
	start := len(dst)
	dst = append(dst, make([]byte, batchHdrLen)...)
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
		dst = append(dst, l.Data...)
		binary.LittleEndian.PutUint32(dst[at+4:], crc32.Checksum(dst[p:], castagnoli))
	}
	putBatchHeader(dst[start:start+batchHdrLen], uint32(len(dst)-start-batchHdrLen), uint32(len(logs)))
	return dst, offs
}

func putBatchHeader(h []byte, body, count uint32) {
	binary.LittleEndian.PutUint32(h[0:], batchMagic)
	binary.LittleEndian.PutUint32(h[4:], body)
	binary.LittleEndian.PutUint32(h[8:], count)
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(h[:12], castagnoli))
}

// batchHeader parses a batch header: body length and entry count.
func batchHeader(b []byte) (body, count uint32, ok bool) {
	if len(b) < batchHdrLen || binary.LittleEndian.Uint32(b) != batchMagic ||
		crc32.Checksum(b[:12], castagnoli) != binary.LittleEndian.Uint32(b[12:]) {
		return 0, 0, false
	}
	body, count = binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
	return body, count, body <= maxBatchBody
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
