package command

import "math"

// The EXPIRE family, TTL family and PERSIST. Relative times are taken from
// c.Now, which on the write path is the leader's clock recorded in the log
// entry, so every node computes the same expiry time. A key whose time has
// come is absent to every command (reads compare with the local clock);
// the leader deletes it through the log.

func init() {
	expire := func(name string, unitMS, abs bool) *Spec {
		f := expireForm{name: name, ms: unitMS, abs: abs}
		return &Spec{Name: name, Flags: Write | Fast,
			Run:      func(c *Ctx, argv [][]byte) { runExpire(c, argv, f) },
			Validate: func(argv [][]byte) error { _, _, err := f.parse(argv, 0); return err }}
	}
	ttl := func(name string, ms, abs bool) *Spec {
		return &Spec{Name: name, Flags: ReadOnly | Fast,
			Run: func(c *Ctx, argv [][]byte) { runTTL(c, argv, ms, abs) }}
	}
	register(
		expire("expire", false, false),
		expire("pexpire", true, false),
		expire("expireat", false, true),
		expire("pexpireat", true, true),
		ttl("ttl", false, false),
		ttl("pttl", true, false),
		ttl("expiretime", false, true),
		ttl("pexpiretime", true, true),
		&Spec{Name: "persist", Flags: Write | Fast, Run: runPersist, Validate: noValidation},
	)
}

type expireFlags uint8

const (
	expireNX expireFlags = 1 << iota
	expireXX
	expireGT
	expireLT
)

var (
	errExpireNXXX = &Error{"ERR NX and XX, GT or LT options at the same time are not compatible"}
	errExpireGTLT = &Error{"ERR GT and LT options at the same time are not compatible"}
)

type expireForm struct {
	name    string
	ms, abs bool
}

// parse reads the options and the time and returns the absolute expiry
// time in Unix milliseconds, with Redis's overflow checks; now is the base
// of relative times.
func (f expireForm) parse(argv [][]byte, now int64) (int64, expireFlags, error) {
	var flags expireFlags
	for _, opt := range argv[3:] {
		switch {
		case eq(opt, "nx"):
			flags |= expireNX
		case eq(opt, "xx"):
			flags |= expireXX
		case eq(opt, "gt"):
			flags |= expireGT
		case eq(opt, "lt"):
			flags |= expireLT
		default:
			return 0, 0, Errorf("ERR Unsupported option %s", cstr(opt))
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		return 0, 0, errExpireNXXX
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		return 0, 0, errExpireGTLT
	}
	when, ok := parseInt(argv[2])
	if !ok {
		return 0, 0, ErrNotInteger
	}
	bad := Errorf("ERR invalid expire time in '%s' command", f.name)
	if !f.ms {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return 0, 0, bad
		}
		when *= 1000
	}
	base := int64(0)
	if !f.abs {
		base = now
	}
	if when > math.MaxInt64-base {
		return 0, 0, bad
	}
	return when + base, flags, nil
}

func runExpire(c *Ctx, argv [][]byte, f expireForm) {
	when, flags, err := f.parse(argv, c.Now)
	if err != nil {
		c.W.Error(err)
		return
	}
	e := c.lookup(argv[1])
	if e == nil {
		c.W.Int(0)
		return
	}
	cur := e.ExpireAt
	if cur == 0 {
		cur = -1
	}
	switch {
	case flags&expireNX != 0 && cur != -1,
		flags&expireXX != 0 && cur == -1,
		flags&expireGT != 0 && (when <= cur || cur == -1),
		flags&expireLT != 0 && cur != -1 && when >= cur:
		c.W.Int(0)
		return
	}
	if when <= c.Now {
		c.db().Delete(argv[1], c.Index)
	} else {
		c.db().SetExpire(argv[1], when, c.Index)
	}
	c.W.Int(1)
}

func runTTL(c *Ctx, argv [][]byte, ms, abs bool) {
	e := c.lookup(argv[1])
	if e == nil {
		c.W.Int(-2)
		return
	}
	if e.ExpireAt == 0 {
		c.W.Int(-1)
		return
	}
	ttl := e.ExpireAt
	if !abs {
		ttl -= c.Now
	}
	if ttl < 0 {
		ttl = 0
	}
	if !ms {
		// Rounded to the nearest second without overflowing near the
		// largest time, as Redis's build computes it.
		ttl = int64((uint64(ttl) + 500) / 1000)
	}
	c.W.Int(ttl)
}

func runPersist(c *Ctx, argv [][]byte) {
	e := c.lookup(argv[1])
	if e == nil || e.ExpireAt == 0 {
		c.W.Int(0)
		return
	}
	c.db().SetExpire(argv[1], 0, c.Index)
	c.W.Int(1)
}
