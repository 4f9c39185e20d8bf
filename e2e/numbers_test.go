package e2e

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestNumbersMatchRedis sends redis-server and goblind (with Redis 7.0's
// double format, as the reference is Debian's Redis 7.0) the same random
// number-like arguments where Redis reads a score, a score bound or an
// integer, and compares every reply byte for byte: signs, leading zeros,
// points, exponents large and small, digits past a double's precision,
// hexadecimal, inf and nan in any case, spaces and trailing junk. The
// seed is logged (GOBLIN_SEED replays it).
func TestNumbersMatchRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{Args: []string{"--double-format", "7.0"}})
	rc, gc := DialRaw(t, rs.Addr), DialRaw(t, g.Addr)
	r := rand.New(rand.NewPCG(testutil.Seed(t), 0))
	mismatches := 0
	for range 1500 {
		n := randomNumber(r)
		if f, err := strconv.ParseFloat(n, 64); err == nil && f == 0 && math.Signbit(f) {
			// A deliberate difference (docs/compatibility.md, Numbers):
			// Redis turns -0 into 0 in its small sets only.
			continue
		}
		bigCount := false
		if c, err := strconv.ParseInt(n, 10, 64); err == nil && (c > 1000 || c < -1000) {
			bigCount = true // a count Redis would answer with that many members
		}
		for _, argv := range [][]string{
			{"ZADD", "k", n, "m"},
			{"ZSCORE", "k", "m"},
			{"ZINCRBY", "k", n, "m"},
			{"ZADD", "k", "INCR", n, "m2"},
			{"ZRANGE", "k", "0", n},
			{"ZRANGE", "k", n, "+inf", "BYSCORE", "WITHSCORES"},
			{"ZCOUNT", "k", "(" + n, "+inf"},
			{"ZRANGEBYSCORE", "k", "-inf", n, "LIMIT", "0", n},
			{"ZRANDMEMBER", "k", n},
		} {
			if argv[0] == "ZRANDMEMBER" && (!strings.HasPrefix(n, "-") || bigCount) {
				continue // a positive count returns members in a random order
			}
			want, got := rc.Do(argv...), gc.Do(argv...)
			if argv[0] == "ZRANDMEMBER" && !bytes.HasPrefix(want, []byte("-")) {
				// A negative count repeats random members: compare the
				// reply's shape, not which members.
				want, got = replyShape(want), replyShape(got)
			}
			if !bytes.Equal(want, got) {
				mismatches++
				t.Errorf("%q:\nredis:  %q\ngoblin: %q", argv, want, got)
				if mismatches == 5 {
					t.FailNow()
				}
			}
		}
		if r.IntN(20) == 0 {
			rc.Do("DEL", "k")
			gc.Do("DEL", "k")
		}
	}
}

// replyShape is an array reply's first line: how many elements it has.
func replyShape(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	return b
}

// randomNumber returns a string a parser of numbers may or may not take.
func randomNumber(r *rand.Rand) string {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	digits := func(max int) string {
		var b strings.Builder
		for range 1 + r.IntN(max) {
			b.WriteByte("0123456789"[r.IntN(10)])
		}
		return b.String()
	}
	switch r.IntN(10) {
	case 0:
		return pick("inf", "+inf", "-inf", "INF", "Inf", "infinity", "-Infinity", "nan", "NaN", "-nan", "+inf ", "in", "")
	case 1:
		return pick("0x10", "0X1p3", "0x", "1e", "1e+", ".", "-", "+", "-.", ".e1", "1..2", "1e1.5", " 1", "1 ", "1\t", "1\x00", "١")
	case 2:
		return pick("9223372036854775807", "9223372036854775808", "-9223372036854775808",
			"-9223372036854775809", "18446744073709551616", "2147483648", "-0", "+0", "00", "01", "-01")
	case 3:
		return pick("1e308", "1.7976931348623157e308", "1.8e308", "1e309", "-1e309", "4.9e-324", "2e-324",
			"1e-400", "2.2250738585072014e-308", "9007199254740993", "0.1", "0.30000000000000004")
	}
	var b strings.Builder
	b.WriteString(pick("", "", "", "-", "+"))
	switch r.IntN(3) {
	case 0:
		b.WriteString(digits(20))
	case 1:
		b.WriteString(digits(4) + "." + digits(20))
	default:
		b.WriteString("." + digits(6))
	}
	if r.IntN(3) == 0 {
		b.WriteString(pick("e", "E", "e+", "e-", "E-") + digits(3))
	}
	if r.IntN(12) == 0 {
		b.WriteString(pick("x", " ", ".", "e", "0"))
	}
	return b.String()
}
