package command

import (
	"math"
	"math/rand/v2"
)

func init() {
	register(&Spec{Name: "zrandmember", Flags: ReadOnly, Run: runZRandMember})
}

var errRandCountRange = Errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, math.MaxInt64)

// MaxAppliedReply bounds the replies a log entry builds on the apply
// path. Every node builds them in memory, and an entry asking for more
// than a node holds would stop every node again each time it replays the
// log. A ZRANDMEMBER with repetition (inside MULTI) that would pass it
// answers errRandReplyTooLarge instead, the same on every node, as the
// reply bytes are; every other command's reply is bounded by the state,
// and the applier bounds how many of those one entry runs.
const MaxAppliedReply = 64 << 20

var errRandReplyTooLarge = &Error{"ERR ZRANDMEMBER count is too large inside a transaction"}

// random returns a uniformly distributed number in [0, n). Reads use the
// server's source; inside a transaction (the apply path) the choice comes
// from a generator seeded by the log index, so every node answers alike.
func (c *Ctx) random(n uint64) uint64 {
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(c.Index, uint64(c.Now))).Uint64
	}
	// Lemire's bounded method would be faster; n is small next to 2^64,
	// so the modulo bias is negligible for a sampling command.
	return c.Rand() % n
}

// ZRANDMEMBER key [count [WITHSCORES]]
func runZRandMember(c *Ctx, argv [][]byte) {
	if len(argv) == 2 {
		z := c.zset(argv[1])
		if z == nil {
			c.W.Null()
			return
		}
		z.Range(int(c.random(uint64(z.Len()))), z.Len(), false, func(m []byte, _ float64) bool {
			c.W.Bulk(m)
			return false
		})
		return
	}
	l, ok := parseInt(argv[2])
	if !ok {
		c.W.Error(ErrNotInteger)
		return
	}
	if l == math.MinInt64 {
		c.W.Error(errRandCountRange)
		return
	}
	withscores := false
	if len(argv) > 4 || (len(argv) == 4 && !eq(argv[3], "withscores")) {
		c.W.Error(ErrSyntax)
		return
	}
	if len(argv) == 4 {
		withscores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.W.Error(ErrOutOfRange)
			return
		}
	}
	z := c.zset(argv[1])
	if z == nil || l == 0 {
		c.W.Array(0)
		return
	}
	size := uint64(z.Len())
	w := c.W
	header := func(n int) {
		if withscores && !w.RESP3() {
			w.Array(2 * n)
		} else {
			w.Array(n)
		}
	}
	emit := func(r int) {
		z.Range(r, r+1, false, func(m []byte, s float64) bool {
			if withscores && w.RESP3() {
				w.Array(2)
			}
			w.Bulk(m)
			if withscores {
				w.Double(s)
			}
			return false
		})
	}
	switch {
	case l < 0 || l == 1:
		// With repetition (or a single pick): any rank each time. The
		// reply is written as it is drawn: a huge count costs reply
		// bytes, as in Redis, but no extra memory, and the output buffer
		// limit (Writer.Full) stops it, as it stops Redis's.
		count := -l
		if l == 1 {
			count = 1
		}
		start := w.Len()
		// Each pick takes 6 bytes at least ("$0\r\n\r\n").
		if c.writing() && count > MaxAppliedReply/6 {
			w.Error(errRandReplyTooLarge)
			return
		}
		header(int(count))
		for ; count > 0 && !w.Full(); count-- {
			emit(int(c.random(size)))
			if c.writing() && w.Len()-start > MaxAppliedReply {
				w.Truncate(start)
				w.Error(errRandReplyTooLarge)
				return
			}
		}
	case uint64(l) >= size:
		// The whole set, from the highest rank down, as Redis iterates it.
		writeRange(w, z, selection{0, int(size), true}, withscores)
	default:
		ranks := c.sampleRanks(int(size), int(l))
		header(len(ranks))
		for _, r := range ranks {
			if w.Full() {
				break
			}
			emit(r)
		}
	}
}

// sampleRanks picks k distinct ranks out of [0, n) (k < n) with Floyd's
// algorithm, returned in random order.
func (c *Ctx) sampleRanks(n, k int) []int {
	chosen := make(map[int]struct{}, k)
	out := make([]int, 0, k)
	for j := n - k; j < n; j++ {
		t := int(c.random(uint64(j + 1)))
		if _, dup := chosen[t]; dup {
			t = j
		}
		chosen[t] = struct{}{}
		out = append(out, t)
	}
	for i := len(out) - 1; i > 0; i-- {
		j := int(c.random(uint64(i + 1)))
		out[i], out[j] = out[j], out[i]
	}
	return out
}
