package main

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// The concurrent workloads run against one sorted set of `members` numeric
// members 1..members whose scores are integers below loadScoreRange (exact
// in every score layout). Writes only touch existing members, so the
// member count never changes and the final state can be checked: ZINCRBY
// adds exactly one per acknowledged command to the score sum.

const loadScoreRange = 1_000_000

// loadScore is member m's initial score.
func loadScore(m int64) float64 { return float64(uint64(m) * 2654435761 % loadScoreRange) }

// loadWorkload is one concurrent workload.
type loadWorkload struct {
	name  string
	about string
	write bool // changes scores (ZINCRBY: the sum grows by one per ack)
	incr  bool
	gen   func(key string, members int64) gen
}

func memberArg(w *worker, members int64) int64 { return 1 + int64(w.rng.intn(uint64(members))) }

var loadWorkloads = []loadWorkload{
	{name: "zadd", about: "ZADD key <score> <member> (existing members, new random score)", write: true,
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool {
				w.c.cmd("ZADD", key, int64(w.rng.intn(loadScoreRange)), memberArg(w, m))
				return true
			}
		}},
	{name: "zincrby", about: "ZINCRBY key 1 <member>", write: true, incr: true,
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool {
				w.c.cmd("ZINCRBY", key, "1", memberArg(w, m))
				return true
			}
		}},
	{name: "zscore", about: "ZSCORE key <member>",
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool { w.c.cmd("ZSCORE", key, memberArg(w, m)); return false }
		}},
	{name: "zrank", about: "ZRANK key <member>",
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool { w.c.cmd("ZRANK", key, memberArg(w, m)); return false }
		}},
	{name: "zrevrank", about: "ZREVRANK key <member>",
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool { w.c.cmd("ZREVRANK", key, memberArg(w, m)); return false }
		}},
	{name: "zrange", about: "ZRANGE key 0 9 WITHSCORES",
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool { w.c.cmd("ZRANGE", key, "0", "9", "WITHSCORES"); return false }
		}},
	{name: "zrangebyscore", about: "ZRANGEBYSCORE key <min> +inf WITHSCORES LIMIT 0 10",
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool {
				w.c.cmd("ZRANGEBYSCORE", key, int64(w.rng.intn(loadScoreRange)), "+inf", "WITHSCORES", "LIMIT", "0", "10")
				return false
			}
		}},
	{name: "mixed", about: "90% reads (ZSCORE, ZRANK, ZREVRANK in turn), 10% ZINCRBY key 1 <member>", write: true, incr: true,
		gen: func(key string, m int64) gen {
			return func(w *worker, _ int64) bool {
				switch r := w.rng.intn(30); {
				case r < 3:
					w.c.cmd("ZINCRBY", key, "1", memberArg(w, m))
					return true
				case r < 12:
					w.c.cmd("ZSCORE", key, memberArg(w, m))
				case r < 21:
					w.c.cmd("ZRANK", key, memberArg(w, m))
				default:
					w.c.cmd("ZREVRANK", key, memberArg(w, m))
				}
				return false
			}
		}},
}

func findLoadWorkload(name string) (*loadWorkload, error) {
	for i := range loadWorkloads {
		if loadWorkloads[i].name == name {
			return &loadWorkloads[i], nil
		}
	}
	var names []string
	for _, l := range loadWorkloads {
		names = append(names, l.name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown workload %q (want one of %v, or all)", name, names)
}

// prepareLoad replaces key with members 1..members at their initial scores
// and returns the expected state.
func prepareLoad(addr, key string, members int64) (stats, error) {
	c, err := dial(addr)
	if err != nil {
		return stats{}, err
	}
	defer c.close()
	if _, err := c.do("DEL", key); err != nil {
		return stats{}, err
	}
	const chunk = 1000
	pairs := make([]pair, 0, members)
	sent := 0
	args := make([]any, 0, 2+2*chunk)
	for m := int64(1); m <= members; {
		args = append(args[:0], "ZADD", key)
		for ; m <= members && len(args) < 2+2*chunk; m++ {
			s := loadScore(m)
			args = append(args, strconv.FormatFloat(s, 'f', -1, 64), m)
			pairs = append(pairs, pair{m, s})
		}
		c.cmd(args...)
		sent++
	}
	if err := c.flush(); err != nil {
		return stats{}, err
	}
	for range sent {
		if err := c.skip(); err != nil {
			return stats{}, fmt.Errorf("filling %s: %w", key, err)
		}
	}
	return summarize(pairs), nil
}

// awaitCard waits, up to 30 s, until key holds members members on addr (a
// replica or follower catching up with the fill).
func awaitCard(addr, key string, members int64, readonly bool) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.close()
	if readonly {
		if _, err := c.do("READONLY"); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := c.do("ZCARD", key)
		if err == nil && v.Num == members {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s has %d members, not %d, after 30 s (%v)", addr, key, v.Num, members, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
