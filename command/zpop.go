package command

import "github.com/goblindb/goblin/keyspace"

// ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP.
//
// In the state machine every one of them is non-blocking: a blocking pop
// that finds nothing to pop replies with a null array, exactly what Redis
// replies when a client may not block (inside MULTI). Waiting is the RESP
// edge's business: it proposes the command again when a key it waits on
// becomes ready, so the pop a blocked client receives is decided by one
// ordinary log entry.

func init() {
	w := Write | Fast
	register(
		&Spec{Name: "zpopmin", Flags: w,
			Run: func(c *Ctx, argv [][]byte) { runZPop(c, argv, false) }, Validate: validate(parseZPop)},
		&Spec{Name: "zpopmax", Flags: w,
			Run: func(c *Ctx, argv [][]byte) { runZPop(c, argv, true) }, Validate: validate(parseZPop)},
		&Spec{Name: "zmpop", Flags: Write,
			Run: func(c *Ctx, argv [][]byte) { runMPop(c, argv, false) }, Validate: validate(func(argv [][]byte) (MPopArgs, error) { return ParseMPop(argv, false) })},
		&Spec{Name: "bzpopmin", Flags: w | Blocking,
			Run: func(c *Ctx, argv [][]byte) { runBZPop(c, argv, false) }, Validate: validateBZPop},
		&Spec{Name: "bzpopmax", Flags: w | Blocking,
			Run: func(c *Ctx, argv [][]byte) { runBZPop(c, argv, true) }, Validate: validateBZPop},
		&Spec{Name: "bzmpop", Flags: Write | Blocking,
			Run: func(c *Ctx, argv [][]byte) { runMPop(c, argv, true) }, Validate: validateBZMPop},
	)
}

var (
	errPositive    = &Error{"ERR value is out of range, must be positive"}
	errNumkeysMPop = &Error{"ERR numkeys should be greater than 0"}
	errCountMPop   = &Error{"ERR count should be greater than 0"}
)

// parseZPop reads ZPOPMIN/ZPOPMAX's optional count: -1 when absent.
func parseZPop(argv [][]byte) (int64, error) {
	if len(argv) > 3 {
		return 0, ErrSyntax
	}
	if len(argv) == 2 {
		return -1, nil
	}
	n, ok := parseInt(argv[2])
	if !ok || n < 0 {
		return 0, errPositive
	}
	return n, nil
}

// popShape is how a pop reply is laid out.
type popShape uint8

const (
	popFlat      popShape = iota // member, score, member, score ...
	popNested                    // [member, score], [member, score] ...
	popKeyFlat                   // key, member, score (BZPOPMIN/BZPOPMAX)
	popKeyNested                 // key, [[member, score] ...] (ZMPOP/BZMPOP)
)

func runZPop(c *Ctx, argv [][]byte, max bool) {
	count, err := parseZPop(argv)
	if err != nil {
		c.W.Error(err)
		return
	}
	e := c.lookup(argv[1])
	if e == nil || count == 0 {
		c.W.Array(0)
		return
	}
	shape := popFlat
	if c.W.RESP3() && count != -1 {
		shape = popNested
	}
	if count == -1 {
		count = 1
	}
	pop(c, argv[1], e, max, count, shape)
}

// pop removes up to count members from one end of e's set and writes them
// in shape.
func pop(c *Ctx, key []byte, e *keyspace.Entry, max bool, count int64, shape popShape) {
	z := e.Z
	n := int(min(count, int64(z.Len())))
	switch shape {
	case popFlat:
		c.W.Array(2 * n)
	case popNested:
		c.W.Array(n)
	case popKeyFlat:
		c.W.Array(2*n + 1)
		c.W.Bulk(key)
	case popKeyNested:
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Array(n)
	}
	start, end := 0, n
	if max {
		start, end = z.Len()-n, z.Len()
	}
	z.Range(start, end, max, func(m []byte, s float64) bool {
		if shape == popNested || shape == popKeyNested {
			c.W.Array(2)
		}
		c.W.Bulk(m)
		c.W.Double(s)
		return true
	})
	z.RemoveRange(start, end)
	c.changed(key, e)
}

// MPopArgs are ZMPOP's and BZMPOP's parsed arguments.
type MPopArgs struct {
	Keys  [][]byte
	Max   bool
	Count int64
	// Timeout is BZMPOP's timeout argument, parsed later (Redis checks it
	// after the other arguments).
	Timeout []byte
}

// ParseMPop parses ZMPOP numkeys key... MIN|MAX [COUNT n], or with block
// BZMPOP timeout numkeys key... MIN|MAX [COUNT n].
func ParseMPop(argv [][]byte, block bool) (MPopArgs, error) {
	var a MPopArgs
	at := 1
	if block {
		a.Timeout = argv[1]
		at = 2
	}
	numkeys, ok := parseInt(argv[at])
	if !ok || numkeys < 1 {
		return a, errNumkeysMPop
	}
	if numkeys >= int64(len(argv)-at-1) {
		return a, ErrSyntax
	}
	whereAt := at + int(numkeys) + 1
	a.Keys = argv[at+1 : whereAt]
	switch {
	case eq(argv[whereAt], "min"):
	case eq(argv[whereAt], "max"):
		a.Max = true
	default:
		return a, ErrSyntax
	}
	a.Count = -1
	for j := whereAt + 1; j < len(argv); j++ {
		if a.Count == -1 && eq(argv[j], "count") && j+1 < len(argv) {
			j++
			n, ok := parseInt(argv[j])
			if !ok || n < 1 {
				return a, errCountMPop
			}
			a.Count = n
			continue
		}
		return a, ErrSyntax
	}
	if a.Count == -1 {
		a.Count = 1
	}
	return a, nil
}

// runMPop runs ZMPOP, or BZMPOP (block) without blocking.
func runMPop(c *Ctx, argv [][]byte, block bool) {
	a, err := ParseMPop(argv, block)
	if err != nil {
		c.W.Error(err)
		return
	}
	if block {
		if _, err := ParseTimeout(a.Timeout, c.Now); err != nil {
			c.W.Error(err)
			return
		}
	}
	popFirst(c, a.Keys, a.Max, a.Count, popKeyNested)
}

// popFirst pops from the first of keys that exists, or replies with a null
// array when none does.
func popFirst(c *Ctx, keys [][]byte, max bool, count int64, shape popShape) {
	for _, k := range keys {
		if e := c.lookup(k); e != nil {
			pop(c, k, e, max, count, shape)
			return
		}
	}
	c.W.NullArray()
}

// BZPopKeys returns the keys of a BZPOPMIN/BZPOPMAX command.
func BZPopKeys(argv [][]byte) [][]byte { return argv[1 : len(argv)-1] }

func validateBZPop(argv [][]byte) error {
	_, err := ParseTimeout(argv[len(argv)-1], 0)
	return err
}

func runBZPop(c *Ctx, argv [][]byte, max bool) {
	if _, err := ParseTimeout(argv[len(argv)-1], c.Now); err != nil {
		c.W.Error(err)
		return
	}
	popFirst(c, BZPopKeys(argv), max, 1, popKeyFlat)
}

func validateBZMPop(argv [][]byte) error {
	a, err := ParseMPop(argv, true)
	if err != nil {
		return err
	}
	_, err = ParseTimeout(a.Timeout, 0)
	return err
}
