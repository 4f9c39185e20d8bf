package command

import (
	"math"
	"strconv"

	"github.com/goblindb/goblin/keyspace"
)

// SCAN walks the keyspace in the order of keyspace.DB.Scan: the cursor is
// a position in a fixed hash order, so a key present for the whole scan is
// returned, on any node and across restarts.
//
// ZSCAN's cursor is a rank. A set of at most zscanSmall members is returned
// whole in one reply with cursor 0, as Redis does for its small (listpack)
// sets; a bigger one is returned by rank, COUNT members per call. Unlike
// Redis's hash-table cursor, a rank cursor can skip members when members
// ranked before the cursor are removed during the scan (and return some
// twice when members are added before it); a scan of an unchanging set
// returns every member exactly once.

func init() {
	register(
		&Spec{Name: "scan", Flags: ReadOnly, Run: runScan},
		&Spec{Name: "zscan", Flags: ReadOnly, Run: runZScan},
	)
}

// zscanSmall is the size up to which ZSCAN returns a set in one reply:
// Redis's zset-max-listpack-entries default.
const zscanSmall = 128

var errInvalidCursor = &Error{"ERR invalid cursor"}

// parseCursor is Redis's parseScanCursorOrReply: strtoul in base 10, so an
// optional sign ("-1" is 2^64-1), no leading space, nothing after the
// digits (the text ends at a NUL byte, as a C string would), and "" is 0.
func parseCursor(b []byte) (uint64, error) {
	b = cstr(b)
	if len(b) > 0 && isCSpace(b[0]) {
		return 0, errInvalidCursor
	}
	i := 0
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var v uint64
	overflow := false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		}
		v = v*10 + d
	}
	if i == start {
		// No digits: strtoul consumed nothing, so only "" passes.
		if len(b) == 0 {
			return 0, nil
		}
		return 0, errInvalidCursor
	}
	if i != len(b) || overflow {
		return 0, errInvalidCursor
	}
	if neg {
		v = -v
	}
	return v, nil
}

// scanOpts are SCAN's and ZSCAN's options.
type scanOpts struct {
	count   int64
	pattern []byte // nil: match everything
	typ     []byte // nil: any type (SCAN only)
}

func parseScanOpts(argv [][]byte, from int, allowType bool) (scanOpts, error) {
	o := scanOpts{count: 10}
	for i := from; i < len(argv); i += 2 {
		more := len(argv) - i
		switch {
		case eq(argv[i], "count") && more >= 2:
			n, ok := parseInt(argv[i+1])
			if !ok {
				return o, ErrNotInteger
			}
			if n < 1 {
				return o, ErrSyntax
			}
			o.count = n
		case eq(argv[i], "match") && more >= 2:
			o.pattern = argv[i+1]
			if len(o.pattern) == 1 && o.pattern[0] == '*' {
				o.pattern = nil
			}
		case allowType && eq(argv[i], "type") && more >= 2:
			o.typ = argv[i+1]
		default:
			return o, ErrSyntax
		}
	}
	return o, nil
}

func (o *scanOpts) match(s []byte) bool {
	return o.pattern == nil || keyspace.Match(o.pattern, s, false)
}

// writeScanReply writes [cursor, [elements...]].
func writeScanReply(w *Writer, cursor uint64, n int, elems func()) {
	w.Array(2)
	var tmp [20]byte
	w.Bulk(strconv.AppendUint(tmp[:0], cursor, 10))
	w.Array(n)
	elems()
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
func runScan(c *Ctx, argv [][]byte) {
	cursor, err := parseCursor(argv[1])
	if err != nil {
		c.W.Error(err)
		return
	}
	o, err := parseScanOpts(argv, 2, true)
	if err != nil {
		c.W.Error(err)
		return
	}
	// Every key is a sorted set: a TYPE filter keeps all or nothing.
	typeOK := o.typ == nil || eq(o.typ, "zset")
	count := int(min(o.count, math.MaxInt32))
	var keys []string
	db := c.db()
	next := db.Scan(cursor, count, func(k string, e *keyspace.Entry) {
		if !typeOK || !o.match([]byte(k)) {
			return
		}
		if e.Expired(c.Now) {
			return
		}
		keys = append(keys, k)
	})
	writeScanReply(c.W, next, len(keys), func() {
		for _, k := range keys {
			c.W.BulkString(k)
		}
	})
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
func runZScan(c *Ctx, argv [][]byte) {
	cursor, err := parseCursor(argv[2])
	if err != nil {
		c.W.Error(err)
		return
	}
	z := c.zset(argv[1])
	if z == nil {
		writeScanReply(c.W, 0, 0, func() {})
		return
	}
	o, err := parseScanOpts(argv, 3, false)
	if err != nil {
		c.W.Error(err)
		return
	}
	n := z.Len()
	start, end := 0, n
	// Small sets come whole; their scores are written as Redis stores them
	// in a listpack (its reply format), big ones as "%.17g".
	format := c.W.Format
	if n > zscanSmall {
		format = Double70
		if cursor >= uint64(n) {
			start = n
		} else {
			start = int(cursor)
		}
		end = start + int(min(o.count, int64(n-start)))
	}
	next := uint64(end)
	if end >= n {
		next = 0
	}
	type pair struct {
		m []byte
		s float64
	}
	var out []pair
	z.Range(start, end, false, func(m []byte, s float64) bool {
		if o.match(m) {
			out = append(out, pair{append([]byte(nil), m...), s})
		}
		return true
	})
	writeScanReply(c.W, next, 2*len(out), func() {
		var tmp [40]byte
		for _, p := range out {
			c.W.Bulk(p.m)
			c.W.Bulk(appendDouble(tmp[:0], p.s, format))
		}
	})
}
