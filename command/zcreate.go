package command

import (
	"strings"

	"github.com/goblindb/goblin/packed"
)

// ZCREATE key layout [score member ...] is Goblin's own command for
// choosing a key's layout explicitly, without a --packed rule:
//
//   - with members, it creates key in layout holding them (as ZADD would)
//     and replies with the number added;
//   - without members, it declares the layout the key gets when a later
//     ZADD, ZINCRBY, ZRANGESTORE or Z*STORE creates it, and replies 0. A
//     sorted set with no members does not exist in Redis's model, so until
//     then the key does not exist either (EXISTS 0); DEL or FLUSHDB drops
//     the declaration.
//
// An existing key is never changed: BUSYKEY, as RESTORE and COPY reply.
// Every member is checked against the layout first; one it cannot hold
// (even after widening) refuses the whole command.

func init() {
	register(&Spec{Name: "zcreate", Flags: Write | DenyOOM,
		Run: runZCreate, Validate: validate(parseZCreate)})
}

var errBusyKey = &Error{"BUSYKEY Target key name already exists."}

type zcreateArgs struct {
	key     []byte
	layout  packed.Layout
	scores  []float64
	members [][]byte
}

func layoutNames() string {
	var names []string
	for l := packed.Standard; l.Valid(); l++ {
		names = append(names, l.String())
	}
	return strings.Join(names, ", ")
}

func parseZCreate(argv [][]byte) (zcreateArgs, error) {
	a := zcreateArgs{key: argv[1]}
	l, err := packed.ParseLayout(string(argv[2]))
	if err != nil {
		return a, Errorf("ERR unknown layout '%s' (want one of %s)", cstr(argv[2]), layoutNames())
	}
	a.layout = l
	rest := argv[3:]
	if len(rest)%2 != 0 {
		return a, ErrSyntax
	}
	for i := 0; i < len(rest); i += 2 {
		s, ok := parseFloat(rest[i])
		if !ok {
			return a, ErrNotFloat
		}
		a.scores = append(a.scores, s)
		a.members = append(a.members, rest[i+1])
	}
	return a, nil
}

func runZCreate(c *Ctx, argv [][]byte) {
	a, err := parseZCreate(argv)
	if err != nil {
		c.W.Error(err)
		return
	}
	if c.lookup(a.key) != nil {
		c.W.Error(errBusyKey)
		return
	}
	if len(a.members) == 0 {
		c.db().Declare(a.key, a.layout)
		c.W.Int(0)
		return
	}
	// The set is new and stored only once every member is in: a member the
	// layout cannot hold refuses the command with nothing changed.
	z := packed.New(a.layout)
	for i, m := range a.members {
		if _, err := z.Add(m, a.scores[i], 0); err != nil {
			c.W.Error(ErrPackedMember)
			return
		}
	}
	storeZSet(c, a.key, z)
	c.W.Int(int64(z.Len()))
}
