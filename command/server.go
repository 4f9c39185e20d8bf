package command

// Connection commands that may be queued in a transaction run here too,
// so EXEC's reply holds their replies in order. Outside transactions the
// RESP edge answers them itself.

func init() {
	register(
		&Spec{Name: "ping", Flags: Fast | Stale | Loading, Run: runPing, Edge: true, InMulti: MultiQueue},
		&Spec{Name: "echo", Flags: Fast | Stale | Loading, Run: runEcho, Edge: true, InMulti: MultiQueue},
		&Spec{Name: "select", Flags: Fast | Stale | Loading, Run: runSelect, Edge: true, InMulti: MultiQueue},
		// UNWATCH inside a transaction is a no-op: EXEC unwatches anyway.
		&Spec{Name: "unwatch", Flags: Fast | Stale | Loading, Run: func(c *Ctx, _ [][]byte) { c.W.OK() },
			Edge: true, InMulti: MultiQueue},
	)
}

func runPing(c *Ctx, argv [][]byte) {
	if len(argv) > 2 {
		c.W.Error(ArityError("ping"))
		return
	}
	if len(argv) == 2 {
		c.W.Bulk(argv[1])
		return
	}
	c.W.Simple("PONG")
}

func runEcho(c *Ctx, argv [][]byte) { c.W.Bulk(argv[1]) }

// runSelect switches the database for the rest of a transaction.
func runSelect(c *Ctx, argv [][]byte) {
	db, err := ParseDB(argv[1])
	if err != nil {
		c.W.Error(err)
		return
	}
	c.DB = db
	c.W.OK()
}

// ParseDB parses a SELECT argument as Redis does.
func ParseDB(b []byte) (int, error) { return parseTargetDB(b) }
