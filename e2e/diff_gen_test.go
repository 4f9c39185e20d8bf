package e2e

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The differential test's command generator: a deterministic random mix
// of every sorted-set and keyspace command Goblin serves, with their
// options, edge values, bad numbers, wrong arities, missing keys and
// several databases.
//
// Keys come in two families. "r" keys hold any scores. "l" keys hold only
// members of score 0, and only they are given to lex commands: Redis leaves
// lex ranges over unequal scores unspecified. Every write that can reach an
// "l" key keeps its scores equal (ZADD with score 0, stores from "l"
// sources, renames within the family).
//
// Expiry times are either in the past (the key is deleted at once) or
// millions of seconds away, so no key expires during a run and replies do
// not depend on how fast the servers answer. GT and LT compare only
// absolute times for the same reason.

type step struct {
	conn int // which connection sends it: 0 speaks RESP2, 1 RESP3
	argv []string
}

func (s step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[RESP%d]", s.conn+2)
	for _, a := range s.argv {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(a))
	}
	return b.String()
}

type gen struct {
	r     *rand.Rand
	proto int   // 0: both connections, 2 or 3: only that one
	base  int64 // Unix seconds at the start: absolute expiry times
	// inMult says which connections are inside MULTI; the runner keeps it
	// up to date from the replies.
	inMult [2]bool
}

func newGen(seed uint64, proto int, base int64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), proto: proto, base: base}
}

func (g *gen) n(k int) int            { return g.r.IntN(k) }
func (g *gen) p(x float64) bool       { return g.r.Float64() < x }
func (g *gen) pick(s []string) string { return s[g.n(len(s))] }

var (
	rKeys     = []string{"r0", "r1", "r2", "r3", "r4", "r:{x}"}
	lKeys     = []string{"l0", "l1", "l2"}
	rMembers  = []string{"a", "b", "c", "d", "e", "f", "g", "h", "1", "2", "10", "-3", "", "x y", "\x00z", strings.Repeat("m", 70)}
	lMembers  = []string{"a", "aa", "ab", "b", "ba", "c", "", "\xff", "A", "b\x00"}
	goodScore = []string{"0", "1", "2", "-1", "3", "1.5", "-2.5", "0.1", "1e3", "10", "inf", "-inf", "+inf", "1e308",
		"-0", "5e-324", "0x10", "1.7976931348623157e308", "2.2250738585072014e-308", "0.30000000000000004", "7", "100", "-100"}
	badScore = []string{"nan", "abc", "", " 1", "1 ", "1e", "--1", "1e400", "1e-400", "NaN", "(1", "0x", "1,5"}
	goodInt  = []string{"-3", "-2", "-1", "0", "1", "2", "3", "4", "5", "10", "-100", "100", "9223372036854775807", "-9223372036854775808"}
	badInt   = []string{"9223372036854775808", "1.5", "abc", "", "+1", "01", " 1", "-0", "1e3"}
	lexBound = []string{"-", "+", "[a", "(a", "[", "(", "[b", "(b", "[aa", "(ab", "[c", "(\xff", "[A"}
	badLex   = []string{"a", "", "+x", "-x", "b"}
	patterns = []string{"*", "r*", "l?", "*1*", "[rl]0", "\\*", "r:*", "a*", "?", "*[", "[^r]*", "h\\"}
	dbs      = []string{"0", "1", "2"}
)

func (g *gen) key() string {
	if g.p(0.75) {
		return g.pick(rKeys)
	}
	return g.pick(lKeys)
}

// keyLike returns a key of the same family as k.
func (g *gen) keyLike(k string) string {
	if k[0] == 'l' {
		return g.pick(lKeys)
	}
	return g.pick(rKeys)
}

func (g *gen) member(k string) string {
	if k[0] == 'l' {
		return g.pick(lMembers)
	}
	return g.pick(rMembers)
}

func (g *gen) score() string {
	if g.p(0.06) {
		return g.pick(badScore)
	}
	return g.pick(goodScore)
}

func (g *gen) scoreBound() string {
	s := g.score()
	if g.p(0.3) {
		return "(" + s
	}
	return s
}

func (g *gen) lexBound() string {
	if g.p(0.05) {
		return g.pick(badLex)
	}
	return g.pick(lexBound)
}

func (g *gen) intArg() string {
	if g.p(0.06) {
		return g.pick(badInt)
	}
	return g.pick(goodInt)
}

func (g *gen) smallInt() string {
	if g.p(0.06) {
		return g.pick(badInt)
	}
	return strconv.Itoa(g.n(8) - 2)
}

// next returns the next step.
func (g *gen) next() step {
	conn := g.n(2)
	switch g.proto {
	case 2:
		conn = 0
	case 3:
		conn = 1
	}
	argv := g.command(conn)
	// Wrong arity now and then: drop or add an argument.
	// (Never for ZRANDMEMBER: without WITHSCORES, a huge negative count
	// that only WITHSCORES refuses asks for 2^63 members.)
	if g.p(0.02) && len(argv) > 1 && argv[0] != "ZRANDMEMBER" {
		argv = argv[:len(argv)-1-g.n(len(argv)-1)]
	} else if g.p(0.01) && !strings.HasSuffix(argv[0], "RANK") {
		// (7.2 gave ZRANK and ZREVRANK an optional WITHSCORE argument,
		// so an extra argument is an arity error only in 7.0.)
		argv = append(argv, "extra")
	}
	return step{conn, argv}
}

type weighted struct {
	w  int
	fn func(g *gen, conn int) []string
}

var commands = []weighted{
	{14, genZAdd}, {3, genZIncrBy}, {4, genZRem}, {3, genZScore}, {2, genZMScore}, {2, genZCard},
	{3, genZRank}, {3, genZCount}, {3, genZLexCount}, {10, genZRange}, {3, genZRangeByScore},
	{3, genZRangeByLex}, {2, genZRevRange}, {3, genZRangeStore}, {4, genZPop}, {2, genZMPop},
	{1, genBZPop}, {1, genBZMPop}, {3, genZRandMember}, {4, genZRemRange}, {8, genSetOp},
	{2, genZScan}, {2, genScan}, {1, genKeys}, {3, genDel}, {2, genExists}, {1, genType},
	{2, genRename}, {2, genCopy}, {1, genMove}, {4, genExpire}, {3, genTTL}, {1, genPersist},
	{1, genObject}, {1, genMemory}, {1, genRandomKey}, {2, genSelect}, {1, genDBSize},
	{1, genPingEcho}, {1, genFlush}, {4, genTx}, {1, genUnknown}, {2, genDump}, {2, genRestore},
}

var totalWeight = func() int {
	n := 0
	for _, c := range commands {
		n += c.w
	}
	return n
}()

func (g *gen) command(conn int) []string {
	if g.inMult[conn] && g.p(0.12) {
		return genTx(g, conn) // keep transactions short
	}
	for {
		x := g.n(totalWeight)
		for _, c := range commands {
			if x < c.w {
				if argv := c.fn(g, conn); argv != nil {
					return argv
				}
				break
			}
			x -= c.w
		}
	}
}

func genZAdd(g *gen, _ int) []string {
	k := g.key()
	argv := []string{"ZADD", k}
	incr := false
	for _, f := range g.r.Perm(6) {
		if !g.p(0.15) {
			continue
		}
		opt := []string{"NX", "XX", "GT", "LT", "CH", "INCR"}[f]
		incr = incr || opt == "INCR"
		if g.p(0.2) {
			opt = strings.ToLower(opt)
		}
		argv = append(argv, opt)
	}
	pairs := 1 + g.n(4)
	if incr && g.p(0.85) {
		pairs = 1
	}
	for i := 0; i < pairs; i++ {
		s := g.score()
		if k[0] == 'l' {
			s = "0"
		}
		argv = append(argv, s, g.member(k))
	}
	if g.p(0.02) {
		argv = append(argv, "dangling")
	}
	return argv
}

func genZIncrBy(g *gen, _ int) []string {
	k := g.pick(rKeys)
	return []string{"ZINCRBY", k, g.score(), g.member(k)}
}

func genZRem(g *gen, _ int) []string {
	k := g.key()
	argv := []string{"ZREM", k}
	for i := 0; i <= g.n(3); i++ {
		argv = append(argv, g.member(k))
	}
	return argv
}

func genZScore(g *gen, _ int) []string {
	k := g.key()
	return []string{"ZSCORE", k, g.member(k)}
}

func genZMScore(g *gen, _ int) []string {
	k := g.key()
	argv := []string{"ZMSCORE", k}
	for i := 0; i <= g.n(3); i++ {
		argv = append(argv, g.member(k))
	}
	return argv
}

func genZCard(g *gen, _ int) []string { return []string{"ZCARD", g.key()} }

func genZRank(g *gen, _ int) []string {
	k := g.key()
	return []string{g.pick([]string{"ZRANK", "ZREVRANK"}), k, g.member(k)}
}

func genZCount(g *gen, _ int) []string {
	return []string{"ZCOUNT", g.key(), g.scoreBound(), g.scoreBound()}
}

func genZLexCount(g *gen, _ int) []string {
	return []string{"ZLEXCOUNT", g.pick(lKeys), g.lexBound(), g.lexBound()}
}

// rangeOpts appends options in random order: each option of opts with
// probability p; LIMIT takes its two numbers.
func (g *gen) rangeOpts(argv []string, opts []string, p float64) []string {
	for _, i := range g.r.Perm(len(opts)) {
		if !g.p(p) {
			continue
		}
		o := opts[i]
		if o == "LIMIT" {
			argv = append(argv, "LIMIT", g.smallInt(), g.smallInt())
			continue
		}
		argv = append(argv, o)
	}
	return argv
}

func genZRange(g *gen, _ int) []string {
	k := g.key()
	argv := []string{"ZRANGE", k}
	switch mode := g.n(3); {
	case mode == 2 && k[0] == 'l':
		argv = append(argv, g.lexBound(), g.lexBound(), "BYLEX")
	case mode >= 1:
		argv = append(argv, g.scoreBound(), g.scoreBound(), "BYSCORE")
	default:
		argv = append(argv, g.intArg(), g.intArg())
	}
	if g.p(0.5) {
		// Options before the BY keyword are fine too.
		by := argv[len(argv)-1]
		if by == "BYSCORE" || by == "BYLEX" {
			argv = argv[:len(argv)-1]
			argv = g.rangeOpts(argv, []string{"REV", "WITHSCORES", "LIMIT", by}, 0.5)
			return argv
		}
	}
	return g.rangeOpts(argv, []string{"REV", "WITHSCORES", "LIMIT"}, 0.35)
}

func genZRangeByScore(g *gen, _ int) []string {
	name := g.pick([]string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"})
	argv := []string{name, g.key(), g.scoreBound(), g.scoreBound()}
	return g.rangeOpts(argv, []string{"WITHSCORES", "LIMIT"}, 0.4)
}

func genZRangeByLex(g *gen, _ int) []string {
	name := g.pick([]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"})
	argv := []string{name, g.pick(lKeys), g.lexBound(), g.lexBound()}
	return g.rangeOpts(argv, []string{"LIMIT"}, 0.4)
}

func genZRevRange(g *gen, _ int) []string {
	argv := []string{"ZREVRANGE", g.key(), g.intArg(), g.intArg()}
	return g.rangeOpts(argv, []string{"WITHSCORES"}, 0.4)
}

func genZRangeStore(g *gen, _ int) []string {
	src := g.key()
	argv := []string{"ZRANGESTORE", g.keyLike(src), src}
	switch mode := g.n(3); {
	case mode == 2 && src[0] == 'l':
		argv = append(argv, g.lexBound(), g.lexBound(), "BYLEX")
	case mode >= 1:
		argv = append(argv, g.scoreBound(), g.scoreBound(), "BYSCORE")
	default:
		argv = append(argv, g.intArg(), g.intArg())
	}
	return g.rangeOpts(argv, []string{"REV", "LIMIT", "WITHSCORES"}, 0.25)
}

func genZPop(g *gen, _ int) []string {
	argv := []string{g.pick([]string{"ZPOPMIN", "ZPOPMAX"}), g.key()}
	if g.p(0.5) {
		argv = append(argv, g.smallInt())
	}
	return argv
}

// keys returns n keys of one family (sometimes mixed: only reads may mix).
func (g *gen) keys(n int) []string {
	first := g.key()
	out := []string{first}
	for len(out) < n {
		out = append(out, g.keyLike(first))
	}
	return out
}

func (g *gen) numkeys(n int) string {
	if g.p(0.05) {
		return g.pick([]string{"0", "-1", "abc", strconv.Itoa(n + 1), "99"})
	}
	return strconv.Itoa(n)
}

func (g *gen) mpopTail(argv []string) []string {
	if g.p(0.95) {
		argv = append(argv, g.pick([]string{"MIN", "MAX", "min"}))
	} else {
		argv = append(argv, "MID")
	}
	if g.p(0.5) {
		argv = append(argv, "COUNT", g.smallInt())
	}
	if g.p(0.03) {
		argv = append(argv, "COUNT", "1")
	}
	return argv
}

func genZMPop(g *gen, _ int) []string {
	ks := g.keys(1 + g.n(3))
	argv := append([]string{"ZMPOP", g.numkeys(len(ks))}, ks...)
	return g.mpopTail(argv)
}

// timeout returns a blocking timeout: tiny (outside MULTI it waits that
// long when there is nothing to pop), 0 inside MULTI (never blocks there),
// or a bad one.
func (g *gen) timeout(conn int) string {
	if g.p(0.1) {
		// (Timeouts too big for milliseconds are "out of range" in 7.2
		// and "negative" in 7.0: table tests cover them.)
		return g.pick([]string{"-1", "abc", "nan", "", "-inf", "-0.002", "0x1p-20", "-5"})
	}
	if g.inMult[conn] {
		return g.pick([]string{"0", "0.01", "1"})
	}
	return g.pick([]string{"0.01", "0.005", "1e-2"})
}

func genBZPop(g *gen, conn int) []string {
	argv := []string{g.pick([]string{"BZPOPMIN", "BZPOPMAX"})}
	argv = append(argv, g.keys(1+g.n(2))...)
	return append(argv, g.timeout(conn))
}

func genBZMPop(g *gen, conn int) []string {
	ks := g.keys(1 + g.n(2))
	argv := append([]string{"BZMPOP", g.timeout(conn), g.numkeys(len(ks))}, ks...)
	return g.mpopTail(argv)
}

func genZRandMember(g *gen, conn int) []string {
	if g.inMult[conn] {
		return nil // random replies cannot be checked inside EXEC
	}
	argv := []string{"ZRANDMEMBER", g.key()}
	if g.p(0.8) {
		c := strconv.Itoa(g.n(13) - 6)
		if g.p(0.05) {
			c = g.pick([]string{"abc", "-9223372036854775808", "1.5"})
		}
		argv = append(argv, c)
		if g.p(0.5) {
			argv = append(argv, "WITHSCORES")
			if g.p(0.05) {
				argv[2] = g.pick([]string{"9223372036854775807", "-9223372036854775807", "4611686018427387904"})
			}
		} else if g.p(0.03) {
			argv = append(argv, "NOSCORES")
		}
	}
	return argv
}

func genZRemRange(g *gen, _ int) []string {
	switch g.n(3) {
	case 0:
		return []string{"ZREMRANGEBYRANK", g.key(), g.intArg(), g.intArg()}
	case 1:
		return []string{"ZREMRANGEBYSCORE", g.key(), g.scoreBound(), g.scoreBound()}
	}
	return []string{"ZREMRANGEBYLEX", g.pick(lKeys), g.lexBound(), g.lexBound()}
}

func genSetOp(g *gen, _ int) []string {
	name := g.pick([]string{"ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZINTERCARD"})
	store := strings.HasSuffix(name, "STORE")
	ks := g.keys(1 + g.n(3))
	if !store && g.p(0.3) {
		// Reads may mix families.
		for i := range ks {
			ks[i] = g.key()
		}
	}
	argv := []string{name}
	if store {
		argv = append(argv, g.keyLike(ks[0]))
	}
	argv = append(argv, g.numkeys(len(ks)))
	argv = append(argv, ks...)
	var opts []string
	switch name {
	case "ZUNION", "ZINTER":
		opts = []string{"WEIGHTS", "AGGREGATE", "WITHSCORES"}
	case "ZUNIONSTORE", "ZINTERSTORE":
		opts = []string{"WEIGHTS", "AGGREGATE"}
	case "ZDIFF":
		opts = []string{"WITHSCORES"}
	case "ZINTERCARD":
		opts = []string{"LIMIT"}
	}
	if g.p(0.05) {
		opts = append(opts, g.pick([]string{"WEIGHTS", "AGGREGATE", "WITHSCORES", "LIMIT", "FOO"}))
	}
	for _, i := range g.r.Perm(len(opts)) {
		if !g.p(0.45) {
			continue
		}
		switch o := opts[i]; o {
		case "WEIGHTS":
			argv = append(argv, "WEIGHTS")
			n := len(ks)
			if g.p(0.05) {
				n += g.n(3) - 1
			}
			for j := 0; j < n; j++ {
				w := g.pick([]string{"1", "2", "0", "-1", "0.5", "inf", "-inf", "3"})
				if g.p(0.04) {
					w = g.pick(badScore)
				}
				argv = append(argv, w)
			}
		case "AGGREGATE":
			a := g.pick([]string{"SUM", "MIN", "MAX", "sum", "max"})
			if g.p(0.05) {
				a = "AVG"
			}
			argv = append(argv, "AGGREGATE", a)
		case "LIMIT":
			argv = append(argv, "LIMIT", g.pick([]string{"0", "1", "2", "-1", "abc", "5"}))
		default:
			argv = append(argv, o)
		}
	}
	return argv
}

func (g *gen) scanOpts(argv []string, typ bool) []string {
	opts := []string{"MATCH", "COUNT"}
	if typ {
		opts = append(opts, "TYPE")
	}
	for _, i := range g.r.Perm(len(opts)) {
		if !g.p(0.4) {
			continue
		}
		switch opts[i] {
		case "MATCH":
			argv = append(argv, "MATCH", g.pick(patterns))
		case "COUNT":
			c := g.pick([]string{"1", "2", "5", "10", "100", "0", "-1", "abc"})
			argv = append(argv, "COUNT", c)
		case "TYPE":
			argv = append(argv, "TYPE", g.pick([]string{"zset", "ZSET", "string", "hash", "nosuchtype"}))
		}
	}
	if g.p(0.03) {
		argv = append(argv, "NOPE")
	}
	return argv
}

func (g *gen) cursor() string {
	if g.p(0.08) {
		return g.pick([]string{"abc", " 0", "18446744073709551616", "1.5", "0x0"})
	}
	if g.p(0.05) {
		return ""
	}
	return "0"
}

func genZScan(g *gen, conn int) []string {
	if g.inMult[conn] {
		return nil
	}
	return g.scanOpts([]string{"ZSCAN", g.key(), g.cursor()}, false)
}

func genScan(g *gen, conn int) []string {
	if g.inMult[conn] {
		return nil
	}
	return g.scanOpts([]string{"SCAN", g.cursor()}, true)
}

func genKeys(g *gen, _ int) []string { return []string{"KEYS", g.pick(patterns)} }

func genDel(g *gen, _ int) []string {
	argv := []string{g.pick([]string{"DEL", "UNLINK"})}
	for i := 0; i <= g.n(2); i++ {
		argv = append(argv, g.key())
	}
	return argv
}

func genExists(g *gen, _ int) []string {
	argv := []string{g.pick([]string{"EXISTS", "TOUCH"})}
	for i := 0; i <= g.n(3); i++ {
		argv = append(argv, g.key())
	}
	return argv
}

func genType(g *gen, _ int) []string { return []string{"TYPE", g.key()} }

func genRename(g *gen, _ int) []string {
	src := g.key()
	dst := g.keyLike(src)
	return []string{g.pick([]string{"RENAME", "RENAMENX"}), src, dst}
}

func genCopy(g *gen, _ int) []string {
	src := g.key()
	argv := []string{"COPY", src, g.keyLike(src)}
	for _, i := range g.r.Perm(2) {
		if !g.p(0.4) {
			continue
		}
		if i == 0 {
			argv = append(argv, "REPLACE")
		} else {
			db := g.pick(dbs)
			if g.p(0.08) {
				db = g.pick([]string{"16", "-1", "abc", "2147483648"})
			}
			argv = append(argv, "DB", db)
		}
	}
	if g.p(0.03) {
		argv = append(argv, "DB")
	}
	return argv
}

func genMove(g *gen, _ int) []string {
	db := g.pick(dbs)
	if g.p(0.1) {
		db = g.pick([]string{"16", "-1", "abc", "2147483648"})
	}
	return []string{"MOVE", g.key(), db}
}

func genExpire(g *gen, _ int) []string {
	k := g.key()
	var argv []string
	abs := g.p(0.5)
	ms := g.p(0.5)
	switch {
	case !abs && !ms:
		argv = []string{"EXPIRE", k, g.pick([]string{"-1", "0", "1000000", "45000000", "-100"})}
	case !abs && ms:
		argv = []string{"PEXPIRE", k, g.pick([]string{"-1", "0", "1000000000", "45000000000"})}
	case abs && !ms:
		argv = []string{"EXPIREAT", k, g.pick([]string{"1", "0", "-5", strconv.FormatInt(g.base+1e7, 10),
			strconv.FormatInt(g.base+2e7, 10), strconv.FormatInt(g.base+3e7, 10)})}
	default:
		argv = []string{"PEXPIREAT", k, g.pick([]string{"1", "1000", strconv.FormatInt((g.base+1e7)*1000, 10),
			strconv.FormatInt((g.base+2e7)*1000+1, 10), strconv.FormatInt((g.base+3e7)*1000, 10)})}
	}
	if g.p(0.06) {
		argv[2] = g.pick([]string{"abc", "9223372036854775807", "-9223372036854775808", "1.5", "9223372036854775"})
	}
	flags := []string{"NX", "XX"}
	if abs {
		flags = append(flags, "GT", "LT")
	}
	for _, i := range g.r.Perm(len(flags)) {
		if g.p(0.2) {
			argv = append(argv, flags[i])
		}
	}
	if g.p(0.02) {
		argv = append(argv, "YY")
	}
	return argv
}

func genTTL(g *gen, _ int) []string {
	return []string{g.pick([]string{"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"}), g.key()}
}

func genPersist(g *gen, _ int) []string { return []string{"PERSIST", g.key()} }

func genObject(g *gen, _ int) []string {
	switch g.n(8) {
	case 0:
		return []string{"OBJECT", "HELP"}
	case 1:
		return []string{"OBJECT", "NOSUCH", g.key()}
	case 2:
		return []string{"OBJECT", "ENCODING"}
	case 3:
		return []string{"OBJECT", "FREQ", g.key()}
	case 4:
		return []string{"OBJECT", "IDLETIME", g.key()}
	case 5:
		return []string{"OBJECT", "REFCOUNT", g.key()}
	}
	return []string{"OBJECT", "ENCODING", g.key()}
}

func genMemory(g *gen, _ int) []string {
	// MEMORY HELP is left out: Goblin lists only the USAGE it supports.
	switch g.n(6) {
	case 1:
		return []string{"MEMORY", "USAGE", g.key(), "SAMPLES", g.pick([]string{"0", "5", "-1", "abc"})}
	case 2:
		return []string{"MEMORY", "USAGE", g.key(), "FOO"}
	}
	return []string{"MEMORY", "USAGE", g.key()}
}

func genRandomKey(g *gen, conn int) []string {
	if g.inMult[conn] {
		return nil
	}
	return []string{"RANDOMKEY"}
}

func genSelect(g *gen, _ int) []string {
	db := g.pick(dbs)
	if g.p(0.1) {
		db = g.pick([]string{"16", "-1", "abc", "2147483648", ""})
	}
	return []string{"SELECT", db}
}

func genDBSize(g *gen, _ int) []string { return []string{"DBSIZE"} }

func genPingEcho(g *gen, _ int) []string {
	switch g.n(3) {
	case 0:
		return []string{"PING"}
	case 1:
		return []string{"PING", g.member("r")}
	}
	return []string{"ECHO", g.member("r")}
}

func genFlush(g *gen, _ int) []string {
	if !g.p(0.15) {
		return nil
	}
	argv := []string{g.pick([]string{"FLUSHDB", "FLUSHALL"})}
	if g.p(0.3) {
		argv = append(argv, g.pick([]string{"SYNC", "ASYNC", "sync", "BAD"}))
	}
	return argv
}

func genTx(g *gen, conn int) []string {
	if g.inMult[conn] {
		switch g.n(10) {
		case 0, 1, 2:
			return []string{"EXEC"}
		case 3:
			return []string{"DISCARD"}
		case 4:
			return []string{"WATCH", g.key()}
		case 5:
			return []string{"MULTI"}
		}
		return []string{"UNWATCH"}
	}
	switch g.n(8) {
	case 0, 1, 2:
		return []string{"MULTI"}
	case 3, 4:
		argv := []string{"WATCH"}
		for i := 0; i <= g.n(2); i++ {
			argv = append(argv, g.key())
		}
		return argv
	case 5:
		return []string{"UNWATCH"}
	case 6:
		return []string{"EXEC"}
	}
	return []string{"DISCARD"}
}

func genUnknown(g *gen, _ int) []string {
	return []string{g.pick([]string{"ZFOO", "NOSUCHCMD", "zaddd"}), g.key(), "x"}
}
