package command

func init() {
	ro := ReadOnly | Fast
	register(
		&Spec{Name: "zscore", Flags: ro, Run: runZScore},
		&Spec{Name: "zmscore", Flags: ro, Run: runZMScore},
		&Spec{Name: "zcard", Flags: ro, Run: runZCard},
		&Spec{Name: "zrank", Flags: ro, Run: func(c *Ctx, argv [][]byte) { zrank(c, argv, false) }},
		&Spec{Name: "zrevrank", Flags: ro, Run: func(c *Ctx, argv [][]byte) { zrank(c, argv, true) }},
		&Spec{Name: "zcount", Flags: ro, Run: runZCount},
		&Spec{Name: "zlexcount", Flags: ro, Run: runZLexCount},
		&Spec{Name: "zrem", Flags: Write | Fast, Run: runZRem, Validate: func([][]byte) error { return nil }},
	)
}

func runZScore(c *Ctx, argv [][]byte) {
	z := c.zset(argv[1])
	if z == nil {
		c.W.Null()
		return
	}
	if s, ok := z.Score(argv[2]); ok {
		c.W.Double(s)
	} else {
		c.W.Null()
	}
}

func runZMScore(c *Ctx, argv [][]byte) {
	z := c.zset(argv[1])
	c.W.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		if z == nil {
			c.W.Null()
			continue
		}
		if s, ok := z.Score(m); ok {
			c.W.Double(s)
		} else {
			c.W.Null()
		}
	}
}

func runZCard(c *Ctx, argv [][]byte) {
	if z := c.zset(argv[1]); z != nil {
		c.W.Int(int64(z.Len()))
	} else {
		c.W.Int(0)
	}
}

func zrank(c *Ctx, argv [][]byte, reverse bool) {
	if len(argv) > 4 {
		name := "zrank"
		if reverse {
			name = "zrevrank"
		}
		c.W.Error(ArityError(name))
		return
	}
	withscore := false
	if len(argv) == 4 {
		if !eq(argv[3], "withscore") {
			c.W.Error(ErrSyntax)
			return
		}
		withscore = true
	}
	missing := func() {
		if withscore {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
	}
	z := c.zset(argv[1])
	if z == nil {
		missing()
		return
	}
	r, s, ok := z.Rank(argv[2])
	if !ok {
		missing()
		return
	}
	if reverse {
		r = z.Len() - 1 - r
	}
	if withscore {
		c.W.Array(2)
		c.W.Int(int64(r))
		c.W.Double(s)
		return
	}
	c.W.Int(int64(r))
}

func runZCount(c *Ctx, argv [][]byte) {
	r, err := parseScoreRange(argv[2], argv[3])
	if err != nil {
		c.W.Error(err)
		return
	}
	z := c.zset(argv[1])
	if z == nil {
		c.W.Int(0)
		return
	}
	start, end := r.ranks(z)
	c.W.Int(int64(end - start))
}

func runZLexCount(c *Ctx, argv [][]byte) {
	r, err := parseLexRange(argv[2], argv[3])
	if err != nil {
		c.W.Error(err)
		return
	}
	z := c.zset(argv[1])
	if z == nil {
		c.W.Int(0)
		return
	}
	start, end, err := r.ranks(z)
	if err != nil {
		c.W.Error(ErrPackedLexBound)
		return
	}
	c.W.Int(int64(end - start))
}

func runZRem(c *Ctx, argv [][]byte) {
	e := c.lookup(argv[1])
	if e == nil {
		c.W.Int(0)
		return
	}
	deleted := 0
	for _, m := range argv[2:] {
		if e.Z.Remove(m) {
			deleted++
		}
		if e.Z.Len() == 0 {
			break
		}
	}
	if deleted > 0 {
		c.changed(argv[1], e)
	}
	c.W.Int(int64(deleted))
}
