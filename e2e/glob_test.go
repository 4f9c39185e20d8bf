package e2e

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestGlobMatchesRedis gives redis-server and goblind the same keys, named
// with the bytes glob patterns give meaning to, and compares what KEYS
// returns for random patterns over those bytes: stars, '?', classes with
// ranges, negation and escapes, malformed patterns (an unterminated class,
// a trailing backslash, a range with a missing end), and bytes of 0x80 and
// up, which Redis compares as signed chars in a range. The seed is logged
// (GOBLIN_SEED replays it).
func TestGlobMatchesRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{})
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	gc := g.Client()
	r := rand.New(rand.NewPCG(testutil.Seed(t), 0))

	const alphabet = "ab*?[]^\\-AB\x80\xff"
	byteOf := func() byte { return alphabet[r.IntN(len(alphabet))] }
	// Every key of up to two of those bytes, and some longer ones.
	keys := []string{""}
	for i := 0; i < len(alphabet); i++ {
		keys = append(keys, alphabet[i:i+1])
		for j := 0; j < len(alphabet); j++ {
			keys = append(keys, string([]byte{alphabet[i], alphabet[j]}))
		}
	}
	for range 40 {
		b := make([]byte, 3+r.IntN(3))
		for i := range b {
			b[i] = byteOf()
		}
		keys = append(keys, string(b))
	}
	for _, k := range keys {
		for _, c := range []*redis.Client{rc, gc} {
			if err := c.ZAdd(ctx, k, redis.Z{Score: 1, Member: "m"}).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A pattern is one to three parts: a byte, '?', '*', an escape, or a
	// class of one or two bytes, ranges or escapes, sometimes negated,
	// sometimes unterminated.
	pattern := func() string {
		var p []byte
		for range 1 + r.IntN(3) {
			switch r.IntN(6) {
			case 0, 1:
				p = append(p, byteOf())
			case 2:
				p = append(p, "?*"[r.IntN(2)])
			case 3:
				p = append(p, '\\')
				if r.IntN(5) != 0 {
					p = append(p, byteOf())
				}
			default:
				p = append(p, '[')
				if r.IntN(3) == 0 {
					p = append(p, '^')
				}
				for range 1 + r.IntN(2) {
					switch r.IntN(3) {
					case 0:
						p = append(p, byteOf())
					case 1:
						p = append(p, byteOf(), '-', byteOf())
					default:
						p = append(p, '\\', byteOf())
					}
				}
				if r.IntN(6) != 0 {
					p = append(p, ']')
				}
			}
		}
		return string(p)
	}
	mismatches := 0
	for range 1500 {
		p := pattern()
		want, err := rc.Keys(ctx, p).Result()
		if err != nil {
			t.Fatalf("redis KEYS %q: %v", p, err)
		}
		got, err := gc.Keys(ctx, p).Result()
		if err != nil {
			t.Fatalf("goblind KEYS %q: %v", p, err)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			mismatches++
			t.Errorf("KEYS %q:\nredis:  %q\ngoblin: %q", p, want, got)
			if mismatches == 5 {
				t.FailNow()
			}
		}
	}
}
