package command

import (
	"bytes"
	"math"

	"github.com/goblindb/goblin/keyspace"
)

// RENAME, RENAMENX, COPY and MOVE. A key keeps its value's layout when it
// moves or is copied: the packed-layout rules choose the layout of new
// sets only.

func init() {
	register(
		&Spec{Name: "rename", Flags: Write,
			Run: func(c *Ctx, argv [][]byte) { runRename(c, argv, false) }, Validate: noValidation},
		&Spec{Name: "renamenx", Flags: Write | Fast,
			Run: func(c *Ctx, argv [][]byte) { runRename(c, argv, true) }, Validate: noValidation},
		&Spec{Name: "copy", Flags: Write | DenyOOM,
			Run: runCopy, Validate: validate(parseCopy)},
		&Spec{Name: "move", Flags: Write | Fast,
			Run: runMove, Validate: func(argv [][]byte) error { _, err := parseTargetDB(argv[2]); return err }},
	)
}

var errSameObject = &Error{"ERR source and destination objects are the same"}

func runRename(c *Ctx, argv [][]byte, nx bool) {
	src, dst := argv[1], argv[2]
	e := c.lookup(src)
	if e == nil {
		c.W.Error(ErrNoSuchKey)
		return
	}
	reply := func(ok bool) {
		switch {
		case !nx:
			c.W.OK()
		case ok:
			c.W.Int(1)
		default:
			c.W.Int(0)
		}
	}
	if bytes.Equal(src, dst) {
		reply(false)
		return
	}
	if c.lookup(dst) != nil && nx {
		reply(false)
		return
	}
	c.db().Delete(src, c.Index)
	c.put(c.DB, dst, &keyspace.Entry{Z: e.Z, ExpireAt: e.ExpireAt})
	reply(true)
}

// put stores e under key in database db, replacing what was there, and
// signals clients blocked on it.
func (c *Ctx) put(db int, key []byte, e *keyspace.Entry) {
	c.KS.DB(db).Set(key, e, c.Index)
	if c.Ready != nil {
		c.Ready(db, key)
	}
}

// parseTargetDB reads a database argument as Redis's getIntFromObject
// followed by selectDb.
func parseTargetDB(b []byte) (int, error) {
	v, ok := parseInt(b)
	if !ok {
		return 0, ErrNotInteger
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, errIntRange
	}
	if v < 0 || v >= keyspace.NumDBs {
		return 0, ErrDBIndex
	}
	return int(v), nil
}

var errIntRange = Errorf("ERR value is out of range, value must between %d and %d", math.MinInt32, math.MaxInt32)

type copyArgs struct {
	db      int // -1: the current database
	replace bool
}

// parseCopy reads COPY's options: REPLACE and DB destination-db.
func parseCopy(argv [][]byte) (copyArgs, error) {
	a := copyArgs{db: -1}
	for j := 3; j < len(argv); j++ {
		switch {
		case eq(argv[j], "replace"):
			a.replace = true
		case eq(argv[j], "db") && j+1 < len(argv):
			db, err := parseTargetDB(argv[j+1])
			if err != nil {
				return a, err
			}
			a.db = db
			j++
		default:
			return a, ErrSyntax
		}
	}
	return a, nil
}

func runCopy(c *Ctx, argv [][]byte) {
	a, err := parseCopy(argv)
	if err != nil {
		c.W.Error(err)
		return
	}
	dstDB := a.db
	if dstDB < 0 {
		dstDB = c.DB
	}
	src, dst := argv[1], argv[2]
	if dstDB == c.DB && bytes.Equal(src, dst) {
		c.W.Error(errSameObject)
		return
	}
	e := c.lookup(src)
	if e == nil {
		c.W.Int(0)
		return
	}
	target := &Ctx{KS: c.KS, DB: dstDB, Now: c.Now, Index: c.Index}
	if target.lookup(dst) != nil && !a.replace {
		c.W.Int(0)
		return
	}
	c.put(dstDB, dst, &keyspace.Entry{Z: e.Z.Clone(), ExpireAt: e.ExpireAt})
	c.W.Int(1)
}

func runMove(c *Ctx, argv [][]byte) {
	dstDB, err := parseTargetDB(argv[2])
	if err != nil {
		c.W.Error(err)
		return
	}
	if dstDB == c.DB {
		c.W.Error(errSameObject)
		return
	}
	key := argv[1]
	e := c.lookup(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	target := &Ctx{KS: c.KS, DB: dstDB, Now: c.Now, Index: c.Index}
	if target.lookup(key) != nil {
		c.W.Int(0)
		return
	}
	c.db().Delete(key, c.Index)
	c.put(dstDB, key, &keyspace.Entry{Z: e.Z, ExpireAt: e.ExpireAt})
	c.W.Int(1)
}
