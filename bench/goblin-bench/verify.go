package main

import (
	"fmt"
	"strconv"
)

// readState reads a numeric-member sorted set back in rank chunks and
// summarizes it. It runs after a workload has finished.
func readState(addr, key string) (stats, error) {
	c, err := dial(addr)
	if err != nil {
		return stats{}, err
	}
	defer c.close()
	card, err := c.do("ZCARD", key)
	if err != nil {
		return stats{}, err
	}
	const chunk = 10_000
	pairs := make([]pair, 0, card.Num)
	for start := int64(0); start < card.Num; start += chunk {
		v, err := c.do("ZRANGE", key, start, start+chunk-1, "WITHSCORES")
		if err != nil {
			return stats{}, err
		}
		if v.Kind != '*' || len(v.Array)%2 != 0 {
			return stats{}, fmt.Errorf("ZRANGE %s: unexpected reply", key)
		}
		for i := 0; i < len(v.Array); i += 2 {
			m, err := strconv.ParseInt(string(v.Array[i].Str), 10, 64)
			if err != nil {
				return stats{}, fmt.Errorf("member %q is not an integer", string(v.Array[i].Str))
			}
			s, err := strconv.ParseFloat(string(v.Array[i+1].Str), 64)
			if err != nil {
				return stats{}, fmt.Errorf("score %q: %v", string(v.Array[i+1].Str), err)
			}
			pairs = append(pairs, pair{m, s})
		}
	}
	if int64(len(pairs)) != card.Num {
		return stats{}, fmt.Errorf("ZCARD said %d, ZRANGE returned %d", card.Num, len(pairs))
	}
	return summarize(pairs), nil
}

// check compares a final state with the expected one.
func check(got, want stats, exactDigest bool) error {
	switch {
	case got.Members != want.Members:
		return fmt.Errorf("%d members, want %d", got.Members, want.Members)
	case got.Sum != want.Sum:
		return fmt.Errorf("score sum %v, want %v", got.Sum, want.Sum)
	case exactDigest && got.Max != want.Max:
		return fmt.Errorf("max score %v, want %v", got.Max, want.Max)
	case exactDigest && got.Digest != want.Digest:
		return fmt.Errorf("digest %s, want %s", got.Digest, want.Digest)
	}
	return nil
}
