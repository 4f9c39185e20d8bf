package rdb

import (
	"encoding/binary"
	"fmt"
)

// A DUMP payload is a value as an RDB file stores it (its type byte and its
// encoding) followed by a footer: the RDB version that wrote it (2 bytes,
// little-endian) and the CRC64 of everything before the checksum (8 bytes,
// little-endian).

// Version is the RDB version this package writes, Redis 7.2's. DUMP
// payloads of later versions are refused, as Redis 7.2 refuses them.
const Version = 11

const footerSize = 10

// VerifyPayload checks a DUMP payload's footer: its length, its version
// (at most Version) and its checksum. It returns ErrChecksum when any is
// wrong.
func VerifyPayload(p []byte) error {
	if len(p) < footerSize {
		return ErrChecksum
	}
	footer := p[len(p)-footerSize:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return ErrChecksum
	}
	if CRC64(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return ErrChecksum
	}
	return nil
}

// PayloadType returns the type of a verified payload: an error wrapping
// ErrCorrupt when its first byte is no value type Redis knows.
func PayloadType(p []byte) (Type, error) {
	if len(p) == 0 || !Type(p[0]).Valid() {
		return 0, errf("payload type")
	}
	return Type(p[0]), nil
}

// DecodeZSet decodes a verified payload holding a sorted set, calling fn
// for each member, and returns the number of members. A payload of a
// known type other than a sorted set gives ErrNotZSet, without being
// decoded further. Bytes after the value, before the footer, are ignored,
// as Redis ignores them.
func DecodeZSet(p []byte, fn MemberFunc) (int, error) {
	t, err := PayloadType(p)
	if err != nil {
		return 0, err
	}
	if !t.IsZSet() {
		return 0, fmt.Errorf("%w: %v", ErrNotZSet, t)
	}
	s := memSource(p[1 : len(p)-footerSize])
	return s.zset(t, fn)
}

// AppendPayload appends a DUMP payload of z to dst, as Redis 7.2 makes
// one: see appendZSet for the encoding, then the footer. format writes
// non-integer scores into listpacks (nil: FormatScore).
func AppendPayload(dst []byte, z ZSetSource, format FormatFunc) []byte {
	start := len(dst)
	dst = appendZSet(dst, z, format)
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, CRC64(0, dst[start:]))
}

// Members is a sorted set held as parallel slices, in any order (the
// encoder orders listpacks, and Redis orders ZSET_2 members as it loads
// them): a ZSetSource for building payloads from decoded data.
type Members struct {
	Member [][]byte
	Score  []float64
}

// Len returns the number of members.
func (m *Members) Len() int { return len(m.Member) }

// Range calls fn for members [start, end), backwards if reverse.
func (m *Members) Range(start, end int, reverse bool, fn func([]byte, float64) bool) {
	if reverse {
		for i := end - 1; i >= start; i-- {
			if !fn(m.Member[i], m.Score[i]) {
				return
			}
		}
		return
	}
	for i := start; i < end; i++ {
		if !fn(m.Member[i], m.Score[i]) {
			return
		}
	}
}
