package command

import (
	"errors"

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

type zaddArgs struct {
	key     []byte
	flags   packed.AddFlags
	ch      bool
	scores  []float64
	members [][]byte
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
	a.scores = make([]float64, elements)
	a.members = make([][]byte, elements)
	for j := 0; j < elements; j++ {
		s, ok := parseFloat(argv[i+2*j])
		if !ok {
			return a, ErrNotFloat
		}
		a.scores[j] = s
		a.members[j] = argv[i+2*j+1]
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
	return zaddArgs{key: argv[1], flags: packed.AddIncr, scores: []float64{s}, members: [][]byte{argv[3]}}, nil
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
	var z *packed.ZSet
	if e != nil {
		z = e.Z
	} else {
		z = packed.New(c.layoutFor(a.key))
	}
	for _, m := range a.members {
		if z.CheckMember(m) != nil {
			c.W.Error(ErrPackedMember)
			return
		}
	}
	if e == nil {
		e = c.create(a.key)
		e.Z = z
	}
	added, updated, processed := 0, 0, 0
	var score float64
	for j, m := range a.members {
		res, err := z.Add(m, a.scores[j], a.flags)
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
