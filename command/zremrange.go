package command

func init() {
	spec := func(name string, typ rangeType) *Spec {
		return &Spec{Name: name, Flags: Write,
			Run:      func(c *Ctx, argv [][]byte) { zremrange(c, argv, typ) },
			Validate: func(argv [][]byte) error { _, err := parseRemRange(argv, typ); return err }}
	}
	register(
		spec("zremrangebyrank", rangeRank),
		spec("zremrangebyscore", rangeScore),
		spec("zremrangebylex", rangeLex),
	)
}

// parseRemRange reads ZREMRANGEBY*'s two bounds.
func parseRemRange(argv [][]byte, typ rangeType) (zrangeArgs, error) {
	a := zrangeArgs{key: argv[1], typ: typ, limit: -1}
	var err error
	switch typ {
	case rangeRank:
		var ok1, ok2 bool
		a.start, ok1 = parseInt(argv[2])
		a.stop, ok2 = parseInt(argv[3])
		if !ok1 || !ok2 {
			err = ErrNotInteger
		}
	case rangeScore:
		a.score, err = parseScoreRange(argv[2], argv[3])
	case rangeLex:
		a.lex, err = parseLexRange(argv[2], argv[3])
	}
	return a, err
}

func zremrange(c *Ctx, argv [][]byte, typ rangeType) {
	a, err := parseRemRange(argv, typ)
	if err != nil {
		c.W.Error(err)
		return
	}
	e := c.lookup(a.key)
	if e == nil {
		c.W.Int(0)
		return
	}
	sel, err := a.selectRanks(e.Z)
	if err != nil {
		c.W.Error(err)
		return
	}
	n := e.Z.RemoveRange(sel.start, sel.end)
	if n > 0 {
		c.changed(a.key, e)
	}
	c.W.Int(int64(n))
}
