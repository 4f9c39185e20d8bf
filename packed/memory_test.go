package packed

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Memory per member, measured as Bytes()/Len() (Bytes counts every
// allocation of the set rounded to the allocator's real size classes; see
// alloc.go). The replay imitates the seed's Wikimedia workload: 279,458
// distinct page IDs, each first added by an increment of 1, then further
// increments of 1 drawn from a skewed (Zipf) distribution, for 2,000,000
// increments in all.

const (
	replayMembers = 279458
	replayIncrs   = 2000000
)

func replay(z *ZSet, member func(i int) []byte, r *rand.Rand) {
	zipf := rand.NewZipf(r, 1.1, 8, replayMembers-1)
	order := r.Perm(replayMembers)
	for i := range replayIncrs {
		k := i
		if i >= replayMembers {
			k = int(zipf.Uint64())
		}
		if _, err := z.Add(member(order[k]), 1, AddIncr); err != nil {
			panic(err)
		}
	}
}

func TestMemoryPerMember(t *testing.T) {
	if testing.Short() || raceEnabled || invariants {
		// (-tags invariants checks the whole set after every one of the
		// 2,000,000 increments: quadratic.)
		t.Skip("a measurement over sets of 279,458 members; too slow for -short, -race or -tags invariants")
	}
	r := rand.New(rand.NewPCG(7, 7))
	ids := make([][]byte, replayMembers)
	strs := make([][]byte, replayMembers)
	seen := map[string]bool{}
	for i := range ids {
		ids[i] = strconv.AppendInt(nil, int64(r.IntN(80_000_000)), 10)
		for seen[string(ids[i])] {
			ids[i] = strconv.AppendInt(nil, int64(r.IntN(80_000_000)), 10)
		}
		seen[string(ids[i])] = true
		for strs[i] == nil || seen[string(strs[i])] {
			strs[i] = make([]byte, 1+r.IntN(10))
			for j := range strs[i] {
				strs[i][j] = byte(r.IntN(256))
			}
		}
		seen[string(strs[i])] = true
	}
	for _, tc := range []struct {
		layout Layout
		member [][]byte
		limit  float64
	}{
		{Int32Float32, ids, 24},
		{Standard, strs, 40},
	} {
		z := New(tc.layout)
		replay(z, func(i int) []byte { return tc.member[i] }, r)
		if err := z.Check(); err != nil {
			t.Fatal(err)
		}
		st := z.Stats()
		bpm := float64(z.Bytes()) / float64(z.Len())
		t.Logf("%v replay: %d members, %.2f bytes/member (limit %v); %d leaves (fill %.2f), %d index slots (load %.2f), arena %d",
			tc.layout, z.Len(), bpm, tc.limit, st.Leaves, float64(st.Len)/float64(st.LeafSlots),
			st.IndexSlots, float64(st.Len)/float64(st.IndexSlots), st.ArenaBytes)
		if z.Len() != replayMembers || bpm > tc.limit {
			t.Errorf("%v: %.2f bytes/member over %d members, want <= %v", tc.layout, bpm, z.Len(), tc.limit)
		}
	}
}
