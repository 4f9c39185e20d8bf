package command

import "github.com/goblindb/goblin/packed"

func init() {
	ro := ReadOnly
	register(
		&Spec{Name: "zrange", Flags: ro,
			Run: func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, rangeAuto, dirAuto) }},
		&Spec{Name: "zrangestore", Flags: Write | DenyOOM,
			Run:      func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 2, true, rangeAuto, dirAuto) },
			Validate: func(argv [][]byte) error { _, err := parseZRange(argv, 2, true, rangeAuto, dirAuto); return err }},
		&Spec{Name: "zrevrange", Flags: ro,
			Run: func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, rangeRank, dirReverse) }},
		&Spec{Name: "zrangebyscore", Flags: ro,
			Run: func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, rangeScore, dirForward) }},
		&Spec{Name: "zrevrangebyscore", Flags: ro,
			Run: func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, rangeScore, dirReverse) }},
		&Spec{Name: "zrangebylex", Flags: ro,
			Run: func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, rangeLex, dirForward) }},
		&Spec{Name: "zrevrangebylex", Flags: ro,
			Run: func(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, rangeLex, dirReverse) }},
	)
}

type rangeType uint8

const (
	rangeAuto rangeType = iota
	rangeRank
	rangeScore
	rangeLex
)

type direction uint8

const (
	dirAuto direction = iota
	dirForward
	dirReverse
)

type zrangeArgs struct {
	key        []byte
	typ        rangeType
	reverse    bool
	withscores bool
	offset     int64
	limit      int64
	start      int64 // rank bounds
	stop       int64
	score      scoreRange
	lex        lexRange
}

// parseZRange parses Redis's unified range syntax; keyAt is the position of
// the source key: <src> <min> <max> [BYSCORE|BYLEX] [REV] [WITHSCORES]
// [LIMIT offset count].
func parseZRange(argv [][]byte, keyAt int, store bool, typ rangeType, dir direction) (zrangeArgs, error) {
	a := zrangeArgs{key: argv[keyAt], limit: -1}
	for j := keyAt + 3; j < len(argv); j++ {
		left := len(argv) - j - 1
		switch {
		case !store && eq(argv[j], "withscores"):
			a.withscores = true
		case eq(argv[j], "limit") && left >= 2:
			var ok bool
			if a.offset, ok = parseInt(argv[j+1]); !ok {
				return a, ErrNotInteger
			}
			if a.limit, ok = parseInt(argv[j+2]); !ok {
				return a, ErrNotInteger
			}
			j += 2
		case dir == dirAuto && eq(argv[j], "rev"):
			dir = dirReverse
		case typ == rangeAuto && eq(argv[j], "bylex"):
			typ = rangeLex
		case typ == rangeAuto && eq(argv[j], "byscore"):
			typ = rangeScore
		default:
			return a, ErrSyntax
		}
	}
	if dir == dirAuto {
		dir = dirForward
	}
	if typ == rangeAuto {
		typ = rangeRank
	}
	if a.limit != -1 && typ == rangeRank {
		return a, ErrLimitRank
	}
	if a.withscores && typ == rangeLex {
		return a, ErrWithscoresLex
	}
	a.typ, a.reverse = typ, dir == dirReverse
	minArg, maxArg := argv[keyAt+1], argv[keyAt+2]
	if a.reverse && typ != rangeRank {
		minArg, maxArg = maxArg, minArg
	}
	var err error
	switch typ {
	case rangeRank:
		var ok1, ok2 bool
		a.start, ok1 = parseInt(minArg)
		a.stop, ok2 = parseInt(maxArg)
		if !ok1 || !ok2 {
			return a, ErrNotInteger
		}
	case rangeScore:
		a.score, err = parseScoreRange(minArg, maxArg)
	case rangeLex:
		a.lex, err = parseLexRange(minArg, maxArg)
	}
	return a, err
}

// selection is a run of ranks [start, end) to emit, in reverse when rev.
type selection struct {
	start, end int
	rev        bool
}

// selectRanks resolves the parsed range against z, applying LIMIT.
func (a *zrangeArgs) selectRanks(z *packed.ZSet) (selection, error) {
	var s selection
	s.rev = a.reverse
	switch a.typ {
	case rangeRank:
		n := z.Len()
		start, stop := a.start, a.stop
		if a.reverse {
			// Ranks count from the end: map to ascending ranks.
			lo, hi := clampRank(start, stop, n)
			s.start, s.end = n-hi, n-lo
			return s, nil
		}
		s.start, s.end = clampRank(start, stop, n)
		return s, nil
	case rangeScore:
		s.start, s.end = a.score.ranks(z)
	case rangeLex:
		var err error
		if s.start, s.end, err = a.lex.ranks(z); err != nil {
			return s, ErrPackedLexBound
		}
	}
	// LIMIT: a negative offset selects nothing, a negative count means all.
	if a.offset < 0 || (a.offset > 0 && a.offset >= int64(z.Len())) {
		return selection{}, nil
	}
	if a.offset >= int64(s.end-s.start) {
		return selection{}, nil
	}
	off := int(a.offset)
	count := s.end - s.start - off
	if a.limit >= 0 && a.limit < int64(count) {
		count = int(a.limit)
	}
	if a.reverse {
		s.end -= off
		s.start = s.end - count
	} else {
		s.start += off
		s.end = s.start + count
	}
	return s, nil
}

func zrangeGeneric(c *Ctx, argv [][]byte, keyAt int, store bool, typ rangeType, dir direction) {
	a, err := parseZRange(argv, keyAt, store, typ, dir)
	if err != nil {
		c.W.Error(err)
		return
	}
	z := c.zset(a.key)
	if store {
		zrangeStore(c, argv[1], z, &a)
		return
	}
	if z == nil {
		c.W.Array(0)
		return
	}
	sel, err := a.selectRanks(z)
	if err != nil {
		c.W.Error(err)
		return
	}
	writeRange(c.W, z, sel, a.withscores)
}

// writeRange emits the members of sel, with scores as RESP2 flat pairs or
// RESP3 nested pairs.
func writeRange(w *Writer, z *packed.ZSet, sel selection, withscores bool) {
	n := sel.end - sel.start
	if withscores && !w.RESP3() {
		w.Array(2 * n)
	} else {
		w.Array(n)
	}
	z.Range(sel.start, sel.end, sel.rev, func(m []byte, s float64) bool {
		if withscores {
			if w.RESP3() {
				w.Array(2)
			}
			w.Bulk(m)
			w.Double(s)
		} else {
			w.Bulk(m)
		}
		return !w.Full()
	})
}

func zrangeStore(c *Ctx, dst []byte, z *packed.ZSet, a *zrangeArgs) {
	var sel selection
	if z != nil {
		var err error
		if sel, err = a.selectRanks(z); err != nil {
			c.W.Error(err)
			return
		}
	}
	n := sel.end - sel.start
	if n <= 0 {
		c.db().Delete(dst, c.Index)
		c.W.Int(0)
		return
	}
	out := packed.New(c.layoutFor(dst))
	var bad bool
	z.Range(sel.start, sel.end, sel.rev, func(m []byte, s float64) bool {
		if _, err := out.Add(m, s, 0); err != nil {
			bad = true
			return false
		}
		return true
	})
	if bad {
		c.W.Error(ErrPackedMember)
		return
	}
	storeZSet(c, dst, out)
	c.W.Int(int64(n))
}

// storeZSet replaces dst with z (which has members), dropping any expiry.
func storeZSet(c *Ctx, dst []byte, z *packed.ZSet) {
	c.changed(dst, c.store(dst, z))
}
