package command

import "github.com/goblindb/goblin/keyspace"

func init() {
	register(
		&Spec{Name: "del", Flags: Write, Run: runDel, Validate: noValidation},
		&Spec{Name: "unlink", Flags: Write | Fast, Run: runDel, Validate: noValidation},
		&Spec{Name: "exists", Flags: ReadOnly | Fast, Run: runExists},
		&Spec{Name: "type", Flags: ReadOnly | Fast, Run: runType},
		&Spec{Name: "touch", Flags: ReadOnly | Fast, Run: runExists},
		&Spec{Name: "randomkey", Flags: ReadOnly, Run: runRandomKey},
		&Spec{Name: "keys", Flags: ReadOnly, Run: runKeys},
		&Spec{Name: "dbsize", Flags: ReadOnly | Fast, Run: runDBSize},
		&Spec{Name: "flushdb", Flags: Write, Run: runFlushDB, Validate: validateFlush},
		&Spec{Name: "flushall", Flags: Write, Run: runFlushAll, Validate: validateFlush},
	)
}

func noValidation([][]byte) error { return nil }

func runDel(c *Ctx, argv [][]byte) {
	n := 0
	for _, k := range argv[1:] {
		// An expired key is deleted by the lookup and does not count; a
		// key that only has a ZCREATE declaration loses it.
		if c.lookup(k) != nil && c.db().Delete(k, c.Index) {
			n++
		} else {
			c.db().Undeclare(k)
		}
	}
	c.W.Int(int64(n))
}

func runExists(c *Ctx, argv [][]byte) {
	n := 0
	for _, k := range argv[1:] {
		if c.lookup(k) != nil {
			n++
		}
	}
	c.W.Int(int64(n))
}

func runType(c *Ctx, argv [][]byte) {
	if c.lookup(argv[1]) != nil {
		c.W.Simple("zset")
	} else {
		c.W.Simple("none")
	}
}

func runKeys(c *Ctx, argv [][]byte) {
	pattern := argv[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	at := c.W.DeferArray()
	n := 0
	c.db().Each(c.Now, func(k string, _ *keyspace.Entry) bool {
		if all || keyspace.Match(pattern, []byte(k), false) {
			c.W.BulkString(k)
			n++
		}
		return !c.W.Full()
	})
	c.W.SetDeferredArray(at, n)
}

func runDBSize(c *Ctx, argv [][]byte) { c.W.Int(int64(c.db().Len())) }

func validateFlush(argv [][]byte) error {
	if len(argv) > 2 || (len(argv) == 2 && !eq(argv[1], "async") && !eq(argv[1], "sync")) {
		return ErrSyntax
	}
	return nil
}

func runFlushDB(c *Ctx, argv [][]byte) {
	if err := validateFlush(argv); err != nil {
		c.W.Error(err)
		return
	}
	c.KS.Flush(c.DB, c.Index, c.Now)
	c.W.OK()
}

func runFlushAll(c *Ctx, argv [][]byte) {
	if err := validateFlush(argv); err != nil {
		c.W.Error(err)
		return
	}
	c.KS.FlushAll(c.Index, c.Now)
	c.W.OK()
}

// randomKeyTries bounds how many random picks RANDOMKEY makes before it
// looks for a live key in order (when most keys have expired and await
// the leader's deletion).
const randomKeyTries = 100

func runRandomKey(c *Ctx, argv [][]byte) {
	db := c.db()
	if db.Len() == 0 {
		c.W.Null()
		return
	}
	for i := 0; i < randomKeyTries; i++ {
		k, _ := db.RandomKey(c.random(uint64(db.Len())))
		if c.lookup([]byte(k)) != nil {
			c.W.BulkString(k)
			return
		}
		if db.Len() == 0 {
			break
		}
	}
	found := false
	db.Each(c.Now, func(k string, _ *keyspace.Entry) bool {
		c.W.BulkString(k)
		found = true
		return false
	})
	if !found {
		c.W.Null()
	}
}
