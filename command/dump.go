package command

import "github.com/goblindb/goblin/rdb"

// DUMP key replies with the key's sorted set serialized as Redis 7.2
// serializes it (see package rdb): a payload that RESTORE, on Goblin or on
// a Redis of RDB version 11 or later, turns back into the same members and
// scores. A missing key is a null reply.

func init() {
	register(&Spec{Name: "dump", Flags: ReadOnly, Run: runDump})
}

func runDump(c *Ctx, argv [][]byte) {
	z := c.zset(argv[1])
	if z == nil {
		c.W.Null()
		return
	}
	c.W.Bulk(rdb.AppendPayload(nil, z, formatScore72))
}

// formatScore72 writes a listpack's non-integer score as Redis 7.2 does.
func formatScore72(dst []byte, f float64) []byte { return appendDouble(dst, f, Double72) }
