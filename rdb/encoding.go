package rdb

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The RDB primitives: lengths, strings and doubles.
//
// A length's first byte tells its form by its top two bits: 00 six bits,
// 01 fourteen bits (with the next byte, big-endian), 10 a 32-bit (0x80) or
// 64-bit (0x81) big-endian number after it, 11 not a length but a special
// string encoding in the low six bits: an 8, 16 or 32-bit little-endian
// integer written as text, or an LZF-compressed string (compressed length,
// plain length, data).
//
// Doubles are 8 bytes of little-endian IEEE 754 (ZSET_2, module values),
// or in the oldest sorted-set type a length byte and decimal text, with
// 253, 254 and 255 standing for NaN, +inf and -inf.

const (
	len6     = 0
	len14    = 1
	len32    = 0x80
	len64    = 0x81
	lenEnc   = 3
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// readLen reads a length; encoded reports the special string form, whose
// kind is then the returned value.
func (s *source) readLen() (n uint64, encoded bool, err error) {
	b, err := s.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case len6:
		return uint64(b & 0x3f), false, nil
	case len14:
		c, err := s.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(b&0x3f)<<8 | uint64(c), false, nil
	case lenEnc:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case len32:
		p, err := s.read(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case len64:
		p, err := s.read(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, errf("unknown length encoding %#x", b)
}

// length reads a plain length (not a string encoding).
func (s *source) length() (uint64, error) {
	n, enc, err := s.readLen()
	if err == nil && enc {
		err = errf("string encoding where a length belongs")
	}
	return n, err
}

// count reads a length that counts items of at least minSize bytes each:
// in memory it must fit in what is left, so it can size an allocation.
func (s *source) count(minSize int) (int, error) {
	n, err := s.length()
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32 || (s.left() >= 0 && n*uint64(minSize) > uint64(s.left())) {
		return 0, errf("count %d beyond the data", n)
	}
	return int(n), nil
}

// str reads a string, valid until the next read from s (it may alias
// s's buffers or buf, which it may grow and return for reuse).
func (s *source) str(buf *[]byte) ([]byte, error) {
	n, enc, err := s.readLen()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > math.MaxInt32 {
			return nil, errf("string of %d bytes", n)
		}
		return s.read(int(n))
	}
	switch n {
	case encInt8, encInt16, encInt32:
		size := 1 << n
		p, err := s.read(size)
		if err != nil {
			return nil, err
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(p[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		*buf = strconv.AppendInt((*buf)[:0], v, 10)
		return *buf, nil
	case encLZF:
		clen, err := s.length()
		if err != nil {
			return nil, err
		}
		ulen, err := s.length()
		if err != nil {
			return nil, err
		}
		if clen > math.MaxInt32 || ulen > math.MaxInt32 {
			return nil, errf("LZF string of %d bytes", ulen)
		}
		c, err := s.read(int(clen))
		if err != nil {
			return nil, err
		}
		if ulen == 0 {
			return (*buf)[:0], nil
		}
		*buf, err = lzfDecompress((*buf)[:0], c, int(ulen))
		return *buf, err
	}
	return nil, errf("unknown string encoding %d", n)
}

// skipStr reads past a string.
func (s *source) skipStr() error {
	n, enc, err := s.readLen()
	if err != nil {
		return err
	}
	if !enc {
		if n > math.MaxInt32 {
			return errf("string of %d bytes", n)
		}
		_, err = s.read(int(n))
		return err
	}
	if n == encLZF {
		// Skipped, not expanded: only the compressed bytes are read.
		clen, err := s.length()
		if err != nil {
			return err
		}
		if _, err := s.length(); err != nil {
			return err
		}
		if clen > math.MaxInt32 {
			return errf("LZF string of %d bytes", clen)
		}
		_, err = s.read(int(clen))
		return err
	}
	if n > encInt32 {
		return errf("unknown string encoding %d", n)
	}
	_, err = s.read(1 << n)
	return err
}

func (s *source) binaryDouble() (float64, error) {
	p, err := s.read(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
}

// textDouble reads the oldest sorted-set type's score.
func (s *source) textDouble() (float64, error) {
	n, err := s.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	p, err := s.read(int(n))
	if err != nil {
		return 0, err
	}
	return parseScore(p)
}

// parseScore reads a score written as text (a listpack's or the old
// sorted set's), as Redis's strtod does for the forms Redis writes.
func parseScore(p []byte) (float64, error) {
	v, err := strconv.ParseFloat(string(p), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, errf("score %q", p)
	}
	return v, nil
}

// appendLen appends n as an RDB length, in its shortest form.
func appendLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, byte(n>>8)|len14<<6, byte(n))
	case n <= math.MaxUint32:
		dst = append(dst, len32)
		return binary.BigEndian.AppendUint32(dst, uint32(n))
	}
	dst = append(dst, len64)
	return binary.BigEndian.AppendUint64(dst, n)
}

// appendString appends s as Redis saves a string: a short integer in
// canonical form as an integer encoding, a string over 20 bytes LZF
// compressed when that saves at least five bytes, otherwise as is.
func appendString(dst, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := parseCanonical(s); ok {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(dst, lenEnc<<6|encInt8, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				dst = append(dst, lenEnc<<6|encInt16)
				return binary.LittleEndian.AppendUint16(dst, uint16(v))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				dst = append(dst, lenEnc<<6|encInt32)
				return binary.LittleEndian.AppendUint32(dst, uint32(v))
			}
		}
	}
	if len(s) > 20 {
		mark := len(dst)
		// Room for the header: marker, two lengths of up to 5 bytes.
		var hdr [11]byte
		h := append(hdr[:0], lenEnc<<6|encLZF)
		if out, ok := lzfCompress(dst, s, len(s)-4); ok {
			clen := len(out) - mark
			h = appendLen(h, uint64(clen))
			h = appendLen(h, uint64(len(s)))
			out = grow(out, len(h))[:len(out)+len(h)]
			copy(out[mark+len(h):], out[mark:mark+clen])
			copy(out[mark:], h)
			return out
		}
		dst = dst[:mark]
	}
	dst = appendLen(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBinaryDouble(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// parseCanonical parses s when it is an integer in the one form Redis
// prints it (no sign on zero, no leading zeros, no plus sign, in int64).
func parseCanonical(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	// Nineteen digits cannot overflow a uint64; twenty exceed int64.
	if len(d) == 0 || len(d) > 19 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
