package command

import "github.com/goblindb/goblin/packed"

// scoreRange is a parsed [min, max] score interval with exclusive ends.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

// parseScoreRange reads ZRANGEBYSCORE-style bounds: a float, "(" for an
// exclusive bound, ±inf.
func parseScoreRange(min, max []byte) (scoreRange, error) {
	var r scoreRange
	var ok bool
	if r.min, r.minex, ok = parseScoreBound(min); !ok {
		return r, ErrMinMaxFloat
	}
	if r.max, r.maxex, ok = parseScoreBound(max); !ok {
		return r, ErrMinMaxFloat
	}
	return r, nil
}

func parseScoreBound(b []byte) (float64, bool, bool) {
	if len(b) > 0 && b[0] == '(' {
		v, ok := parseRangeFloat(b[1:])
		return v, true, ok
	}
	v, ok := parseRangeFloat(b)
	return v, false, ok
}

// ranks returns the ranks [start, end) of z's members within r.
func (r scoreRange) ranks(z *packed.ZSet) (int, int) {
	if r.min > r.max || (r.min == r.max && (r.minex || r.maxex)) {
		return 0, 0
	}
	start := z.ScoreRank(r.min, r.minex)
	end := z.ScoreRank(r.max, !r.maxex)
	if start > end {
		return 0, 0
	}
	return start, end
}

// lexBound is one end of a ZRANGEBYLEX interval.
type lexBound struct {
	inf   int8 // -1 for "-", +1 for "+", 0 for a value
	value []byte
	ex    bool
}

type lexRange struct{ min, max lexBound }

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+':
		return lexBound{inf: 1}, len(b) == 1
	case '-':
		return lexBound{inf: -1}, len(b) == 1
	case '(':
		return lexBound{value: b[1:], ex: true}, true
	case '[':
		return lexBound{value: b[1:]}, true
	}
	return lexBound{}, false
}

func parseLexRange(min, max []byte) (lexRange, error) {
	lo, ok1 := parseLexBound(min)
	hi, ok2 := parseLexBound(max)
	if !ok1 || !ok2 {
		return lexRange{}, ErrMinMaxLex
	}
	return lexRange{lo, hi}, nil
}

// rank returns how many members order before the bound: for a lower bound
// (lower=true) the first rank inside it, for an upper bound the first rank
// past it.
func (b lexBound) rank(z *packed.ZSet, lower bool) (int, error) {
	switch b.inf {
	case -1:
		return 0, nil
	case 1:
		return z.Len(), nil
	}
	inclusive := b.ex == lower // lower exclusive or upper inclusive: count <=
	return z.LexRank(b.value, inclusive)
}

// ranks returns the ranks [start, end) of z's members within r.
func (r lexRange) ranks(z *packed.ZSet) (int, int, error) {
	start, err := r.min.rank(z, true)
	if err != nil {
		return 0, 0, err
	}
	end, err := r.max.rank(z, false)
	if err != nil {
		return 0, 0, err
	}
	if start > end {
		return 0, 0, nil
	}
	return start, end, nil
}

// clampRank turns Redis's start/stop rank arguments (negative from the end)
// into [start, end) over n members.
func clampRank(start, stop int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop + 1)
}
