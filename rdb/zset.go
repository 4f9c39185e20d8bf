package rdb

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// MemberFunc receives one member of a sorted set and its score. member is
// valid only during the call. A non-nil error stops the decoding and is
// returned as is.
type MemberFunc func(member []byte, score float64) error

// ErrEmpty is wrapped by the error for a sorted set with no members, which
// Redis refuses to RESTORE and skips when loading a file.
var ErrEmpty = fmt.Errorf("%w: empty sorted set", ErrCorrupt)

// zset decodes a sorted-set value of type t, calling fn for each member in
// the order stored, and returns the number of members. NaN scores are
// refused; duplicate members are fn's to notice.
func (s *source) zset(t Type, fn MemberFunc) (int, error) {
	switch t {
	case TypeZSet, TypeZSet2:
		n, err := s.count(2)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, ErrEmpty
		}
		var buf, held []byte
		for range n {
			m, err := s.str(&buf)
			if err != nil {
				return 0, err
			}
			if s.r != nil {
				// m aliases the stream's buffer, which the score's read
				// may reuse.
				held = append(held[:0], m...)
				m = held
			}
			var score float64
			if t == TypeZSet2 {
				score, err = s.binaryDouble()
			} else {
				score, err = s.textDouble()
			}
			if err != nil {
				return 0, err
			}
			if math.IsNaN(score) {
				return 0, errf("NaN score")
			}
			if err := fn(m, score); err != nil {
				return 0, err
			}
		}
		return n, nil
	case TypeZSetZiplist, TypeZSetListpack:
		var buf []byte
		blob, err := s.str(&buf)
		if err != nil {
			return 0, err
		}
		return pairs(t, blob, fn)
	}
	return 0, fmt.Errorf("%w: %v", ErrNotZSet, t)
}

// pairs decodes a listpack or ziplist of member, score pairs.
func pairs(t Type, blob []byte, fn MemberFunc) (int, error) {
	walk := walkListpack
	if t == TypeZSetZiplist {
		walk = walkZiplist
	}
	var (
		member  []byte
		odd     bool
		members int
		num     [20]byte
	)
	n, err := walk(blob, func(s []byte, v int64, isInt bool) error {
		if !odd {
			if isInt {
				s = strconv.AppendInt(num[:0], v, 10)
			}
			member = append(member[:0], s...)
			odd = true
			return nil
		}
		odd = false
		var score float64
		if isInt {
			score = float64(v)
		} else {
			var err error
			if score, err = parseScore(s); err != nil {
				return err
			}
		}
		if math.IsNaN(score) {
			return errf("NaN score")
		}
		members++
		return fn(member, score)
	})
	if err != nil {
		return 0, err
	}
	if odd {
		return 0, errf("%v with an odd number of entries", t)
	}
	if n == 0 {
		return 0, ErrEmpty
	}
	return members, nil
}

// ZSetSource is a sorted set to encode: its length, and its members in
// order by score (ties in any order) forwards or backwards.
// packed.ZSet is one.
type ZSetSource interface {
	Len() int
	Range(start, end int, reverse bool, fn func(member []byte, score float64) bool)
}

// Limits of the listpack encoding, Redis's defaults for
// zset-max-listpack-entries and zset-max-listpack-value.
const (
	ListpackEntries = 128
	ListpackValue   = 64
)

// FormatFunc appends a score as text to dst (used for non-integer scores
// in listpacks).
type FormatFunc func(dst []byte, f float64) []byte

// FormatScore is the default FormatFunc: the shortest text that reads back
// as the same double, with inf and -inf spelt as Redis spells them.
func FormatScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendZSet appends z's type byte and value as Redis 7.2 saves a sorted
// set: a listpack when it has at most ListpackEntries members of at most
// ListpackValue bytes, otherwise ZSET_2 from the highest member to the
// lowest.
func appendZSet(dst []byte, z ZSetSource, format FormatFunc) []byte {
	if format == nil {
		format = FormatScore
	}
	n := z.Len()
	if n <= ListpackEntries {
		type ent struct {
			m []byte
			s float64
		}
		ents := make([]ent, 0, n)
		small := true
		z.Range(0, n, false, func(m []byte, s float64) bool {
			if len(m) > ListpackValue {
				small = false
				return false
			}
			ents = append(ents, ent{append([]byte(nil), m...), s})
			return true
		})
		if small {
			// Redis's listpack is ordered by score, then member bytes.
			sort.SliceStable(ents, func(i, j int) bool {
				if ents[i].s != ents[j].s {
					return ents[i].s < ents[j].s
				}
				return string(ents[i].m) < string(ents[j].m)
			})
			lp := newListpack(nil)
			var num [32]byte
			for _, e := range ents {
				lp.appendStr(e.m)
				if v, ok := double2ll(e.s); ok {
					lp.appendInt(v)
				} else {
					lp.appendStr(format(num[:0], e.s))
				}
			}
			dst = append(dst, byte(TypeZSetListpack))
			return appendString(dst, lp.finish(0))
		}
	}
	dst = append(dst, byte(TypeZSet2))
	dst = appendLen(dst, uint64(n))
	z.Range(0, n, true, func(m []byte, s float64) bool {
		dst = appendString(dst, m)
		dst = appendBinaryDouble(dst, s)
		return true
	})
	return dst
}

// double2ll reports whether f is an integer Redis stores as one (within
// ±2^62, which includes -0 as 0).
func double2ll(f float64) (int64, bool) {
	const lim = float64(math.MaxInt64 / 2)
	if !(f >= -lim && f <= lim) {
		return 0, false
	}
	v := int64(f)
	return v, float64(v) == f
}

// isEmpty reports whether err is the empty-set error.
func isEmpty(err error) bool { return errors.Is(err, ErrEmpty) }
