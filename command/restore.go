package command

import (
	"errors"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/rdb"
)

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ
// frequency] creates key from a DUMP payload: Goblin's own, or one made by
// Redis (MIGRATE sends RESTORE, or RESTORE-ASKING to a cluster node, which
// Goblin serves alike).
//
// The checks run in Redis's order: the options, BUSYKEY when the key
// exists and REPLACE is not given, the TTL, the payload's version and
// checksum, then its type and encoding. The payload must hold a sorted
// set; one of any other type is answered "ERR Bad data format", Redis's
// reply to a payload of a type it cannot load. The edge's Validate makes
// every check that needs no keyspace, so a bad TTL or payload is answered
// before reaching the log, ahead of BUSYKEY; inside MULTI the order is
// Redis's throughout.
//
// The set gets the layout any new key under its name gets (a ZCREATE
// declaration, else the first matching --packed rule); a member the layout
// cannot hold refuses the command with nothing changed. A ttl of 0 means
// no expiry; otherwise it is relative to the entry's time, or a Unix time
// in milliseconds with ABSTTL; a time already past stores nothing and
// replies OK (deleting the old key under REPLACE). IDLETIME and FREQ are
// checked and ignored: Goblin keeps no LRU or LFU data.

func init() {
	for _, name := range []string{"restore", "restore-asking"} {
		register(&Spec{Name: name, Flags: Write | DenyOOM,
			Run: runRestore, Validate: validateRestore})
	}
}

var (
	errRestorePayload  = &Error{"ERR DUMP payload version or checksum are wrong"}
	errBadDataFormat   = &Error{"ERR Bad data format"}
	errRestoreTTL      = &Error{"ERR Invalid TTL value, must be >= 0"}
	errRestoreIdle     = &Error{"ERR Invalid IDLETIME value, must be >= 0"}
	errRestoreFreq     = &Error{"ERR Invalid FREQ value, must be >= 0 and <= 255"}
	errRestoreNotAdded = errors.New("duplicate member")
)

type restoreArgs struct {
	replace, absTTL bool
}

// parseRestoreOptions reads the options after the payload, as Redis does:
// IDLETIME and FREQ exclude each other (the second is a syntax error).
func parseRestoreOptions(argv [][]byte) (restoreArgs, error) {
	var a restoreArgs
	idle, freq := false, false
	for j := 4; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case eq(argv[j], "replace"):
			a.replace = true
		case eq(argv[j], "absttl"):
			a.absTTL = true
		case eq(argv[j], "idletime") && more && !freq:
			v, ok := parseInt(argv[j+1])
			if !ok {
				return a, ErrNotInteger
			}
			if v < 0 {
				return a, errRestoreIdle
			}
			idle = true
			j++
		case eq(argv[j], "freq") && more && !idle:
			v, ok := parseInt(argv[j+1])
			if !ok {
				return a, ErrNotInteger
			}
			if v < 0 || v > 255 {
				return a, errRestoreFreq
			}
			freq = true
			j++
		default:
			return a, ErrSyntax
		}
	}
	return a, nil
}

func parseRestoreTTL(b []byte) (int64, error) {
	ttl, ok := parseInt(b)
	if !ok {
		return 0, ErrNotInteger
	}
	if ttl < 0 {
		return 0, errRestoreTTL
	}
	return ttl, nil
}

// checkPayload checks a payload's footer, then its type and encoding,
// with Redis's replies.
func checkPayload(p []byte, fn rdb.MemberFunc) error {
	if rdb.VerifyPayload(p) != nil {
		return errRestorePayload
	}
	if _, err := rdb.DecodeZSet(p, fn); err != nil {
		return errBadDataFormat
	}
	return nil
}

func validateRestore(argv [][]byte) error {
	if _, err := parseRestoreOptions(argv); err != nil {
		return err
	}
	if _, err := parseRestoreTTL(argv[2]); err != nil {
		return err
	}
	return checkPayload(argv[3], func([]byte, float64) error { return nil })
}

func runRestore(c *Ctx, argv [][]byte) {
	a, err := parseRestoreOptions(argv)
	if err != nil {
		c.W.Error(err)
		return
	}
	key := argv[1]
	if !a.replace && c.lookup(key) != nil {
		c.W.Error(errBusyKey)
		return
	}
	ttl, err := parseRestoreTTL(argv[2])
	if err != nil {
		c.W.Error(err)
		return
	}
	z := packed.New(c.layoutFor(key))
	var refused error
	err = checkPayload(argv[3], func(m []byte, s float64) error {
		res, err := z.Add(m, s, 0)
		switch {
		case err != nil:
			refused = ErrPackedMember
			return err
		case !res.Added:
			return errRestoreNotAdded
		}
		return nil
	})
	if refused != nil {
		err = refused
	}
	if err != nil {
		c.W.Error(err)
		return
	}
	if a.replace {
		c.db().Delete(key, c.Index)
	}
	if ttl != 0 && !a.absTTL {
		ttl += c.Now
	}
	if ttl != 0 && ttl <= c.Now {
		c.W.OK()
		return
	}
	c.put(c.DB, key, &keyspace.Entry{Z: z, ExpireAt: ttl})
	c.W.OK()
}
