package command

import (
	"errors"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
)

func init() {
	register(
		&Spec{Name: "zadd", Flags: Write | DenyOOM | Fast,
			Run: runZAdd, Validate: validate(parseZAdd)},
		&Spec{Name: "zincrby", Flags: Write | DenyOOM | Fast,
			Run: runZIncrBy, Validate: validate(parseZIncrBy)},
	)
}

// validate adapts a parser into a Spec.Validate.
func validate[A any](parse func([][]byte) (A, error)) func([][]byte) error {
	return func(argv [][]byte) error {
		_, err := parse(argv)
		return err
	}
}

// zaddArgs is a parsed ZADD or ZINCRBY. The score-member pairs stay in
// the command's arguments; the scores are parsed once, into score0 for
// the one pair most commands carry, so parsing allocates nothing then
// (the edge parses each write to validate it, the state machine again to
// run it).
type zaddArgs struct {
	key    []byte
	flags  packed.AddFlags
	ch     bool
	pairs  [][]byte  // score, member, score, member...
	score0 float64   // the score of the only pair
	scores []float64 // the scores, given more than one pair
}

func (a *zaddArgs) len() int            { return len(a.pairs) / 2 }
func (a *zaddArgs) member(j int) []byte { return a.pairs[2*j+1] }

func (a *zaddArgs) score(j int) float64 {
	if a.scores == nil {
		return a.score0
	}
	return a.scores[j]
}

func parseZAdd(argv [][]byte) (zaddArgs, error) {
	a := zaddArgs{key: argv[1]}
	i := 2
	for ; i < len(argv); i++ {
		switch {
		case eq(argv[i], "nx"):
			a.flags |= packed.AddNX
		case eq(argv[i], "xx"):
			a.flags |= packed.AddXX
		case eq(argv[i], "ch"):
			a.ch = true
		case eq(argv[i], "incr"):
			a.flags |= packed.AddIncr
		case eq(argv[i], "gt"):
			a.flags |= packed.AddGT
		case eq(argv[i], "lt"):
			a.flags |= packed.AddLT
		default:
			goto pairs
		}
	}
pairs:
	elements := len(argv) - i
	if elements == 0 || elements%2 != 0 {
		return a, ErrSyntax
	}
	elements /= 2
	f := a.flags
	if f&packed.AddNX != 0 && f&packed.AddXX != 0 {
		return a, ErrXXNX
	}
	if (f&packed.AddGT != 0 && f&packed.AddNX != 0) || (f&packed.AddLT != 0 && f&packed.AddNX != 0) || (f&packed.AddGT != 0 && f&packed.AddLT != 0) {
		return a, ErrGTLTNX
	}
	if f&packed.AddIncr != 0 && elements > 1 {
		return a, ErrIncrPair
	}
	a.pairs = argv[i:]
	if elements > 1 {
		a.scores = make([]float64, elements)
	}
	for j := 0; j < elements; j++ {
		s, ok := parseFloat(a.pairs[2*j])
		if !ok {
			return a, ErrNotFloat
		}
		if a.scores != nil {
			a.scores[j] = s
		} else {
			a.score0 = s
		}
	}
	return a, nil
}

func parseZIncrBy(argv [][]byte) (zaddArgs, error) {
	// Redis parses ZINCRBY as ZADD INCR: ZADD's flags before the
	// increment leave an odd number of arguments.
	for _, flag := range [...]string{"nx", "xx", "ch", "incr", "gt", "lt"} {
		if eqFold(argv[2], flag) {
			return zaddArgs{}, ErrSyntax
		}
	}
	s, ok := parseFloat(argv[2])
	if !ok {
		return zaddArgs{}, ErrNotFloat
	}
	return zaddArgs{key: argv[1], flags: packed.AddIncr, pairs: argv[2:4], score0: s}, nil
}

func runZAdd(c *Ctx, argv [][]byte) {
	a, err := parseZAdd(argv)
	if err != nil {
		c.W.Error(err)
		return
	}
	zadd(c, a)
}

func runZIncrBy(c *Ctx, argv [][]byte) {
	a, err := parseZIncrBy(argv)
	if err != nil {
		c.W.Error(err)
		return
	}
	zadd(c, a)
}

// zadd implements ZADD and ZINCRBY. Every member is checked against the
// key's layout before anything changes, so a refused member leaves the key
// as it was.
func zadd(c *Ctx, a zaddArgs) {
	incr := a.flags&packed.AddIncr != 0
	e := c.lookup(a.key)
	if e == nil && a.flags&packed.AddXX != 0 {
		if incr {
			c.W.Null()
		} else {
			c.W.Int(0)
		}
		return
	}
	stored := e != nil
	if !stored {
		e = &keyspace.Entry{Z: packed.New(c.layoutFor(a.key))}
	}
	z := e.Z
	for j := range a.len() {
		if z.CheckMember(a.member(j)) != nil {
			c.W.Error(ErrPackedMember)
			return
		}
	}
	if !stored {
		c.db().Set(a.key, e, c.Index)
	}
	added, updated, processed := 0, 0, 0
	var score float64
	for j := range a.len() {
		res, err := z.Add(a.member(j), a.score(j), a.flags)
		if err != nil {
			if errors.Is(err, packed.ErrNaN) {
				c.W.Error(ErrNaN)
			} else {
				c.W.Error(ErrPackedMember)
			}
			if added+updated > 0 {
				c.changed(a.key, e)
			}
			return
		}
		if res.Added {
			added++
		}
		if res.Changed {
			updated++
		}
		if !res.Skipped {
			processed++
		}
		score = res.Score
	}
	if added+updated > 0 {
		c.changed(a.key, e)
	}
	switch {
	case incr && processed > 0:
		c.W.Double(score)
	case incr:
		c.W.Null()
	case a.ch:
		c.W.Int(int64(added + updated))
	default:
		c.W.Int(int64(added))
	}
}
