package drill

import (
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// maxMembers bounds --members: a key's model state is a fixed array.
const maxMembers = 8

// zstate is one sorted set of the model: member i's score, when present.
type zstate [maxMembers]slot

type slot struct {
	in    bool
	score float64
}

// opIn and opOut are the input and output porcupine sees. An operation
// whose outcome is unknown has an output that any state accepts (and no
// return: it may take effect at any point after its call).
type opIn struct {
	kind   Kind
	member int
	arg    float64
}

type opOut struct {
	unknown bool
	added   int64
	score   float64
	absent  bool
	rng     []Scored
}

// sorted returns the state as ZRANGE 0 -1 lists it: by score, then by
// member name.
func (s zstate) sorted() []Scored {
	var out []Scored
	for i, sl := range s {
		if sl.in {
			out = append(out, Scored{Member: i, Score: sl.score})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score < out[b].Score
		}
		return memberName(out[a].Member) < memberName(out[b].Member)
	})
	return out
}

var hashSeed = maphash.MakeSeed()

// zsetModel is the sequential specification of one key: the history is
// partitioned by key, each key an independent sorted set.
var zsetModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range history {
			k := op.Metadata.(int)
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		sort.Ints(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() interface{} { return zstate{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s, in, out := state.(zstate), input.(opIn), output.(opOut)
		sl := s[in.member]
		switch in.kind {
		case KindZAdd:
			ok := out.unknown || (out.added == 1) == !sl.in
			s[in.member] = slot{in: true, score: in.arg}
			return ok, s
		case KindZIncrBy:
			v := sl.score + in.arg
			if !sl.in {
				v = in.arg
			}
			ok := out.unknown || out.score == v
			s[in.member] = slot{in: true, score: v}
			return ok, s
		case KindZScore:
			if sl.in {
				return !out.absent && out.score == sl.score, s
			}
			return out.absent, s
		case KindZRange:
			want := s.sorted()
			if len(want) != len(out.rng) {
				return false, s
			}
			for i := range want {
				if want[i] != out.rng[i] {
					return false, s
				}
			}
			return true, s
		}
		return false, s
	},
	Hash: func(state interface{}) uint64 {
		var h maphash.Hash
		h.SetSeed(hashSeed)
		for _, sl := range state.(zstate) {
			if sl.in {
				var b [8]byte
				u := math.Float64bits(sl.score)
				for i := range b {
					b[i] = byte(u >> (8 * i))
				}
				h.Write(b[:])
			} else {
				h.WriteByte(0xff)
			}
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(opIn), output.(opOut)
		var call string
		switch in.kind {
		case KindZAdd:
			call = fmt.Sprintf("ZADD %s %s", fmtScore(in.arg), memberName(in.member))
		case KindZIncrBy:
			call = fmt.Sprintf("ZINCRBY %s %s", fmtScore(in.arg), memberName(in.member))
		case KindZScore:
			call = "ZSCORE " + memberName(in.member)
		case KindZRange:
			call = "ZRANGE 0 -1"
		}
		if out.unknown {
			return call + " → ?"
		}
		switch in.kind {
		case KindZAdd:
			return fmt.Sprintf("%s → %d", call, out.added)
		case KindZIncrBy:
			return fmt.Sprintf("%s → %s", call, fmtScore(out.score))
		case KindZScore:
			if out.absent {
				return call + " → nil"
			}
			return fmt.Sprintf("%s → %s", call, fmtScore(out.score))
		}
		return call + " → " + describeRange(out.rng)
	},
	DescribeState: func(state interface{}) string {
		return describeRange(state.(zstate).sorted())
	},
}

func describeRange(r []Scored) string {
	parts := make([]string, len(r))
	for i, e := range r {
		parts[i] = memberName(e.Member) + "=" + fmtScore(e.Score)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// porcupineOps turns the history of the workload keys into porcupine's
// operations: answered operations with their results, writes with an
// unknown outcome as pending until after the end, and failed operations
// (which did not happen) and failed or unanswered reads (which observed
// nothing) left out.
func porcupineOps(ops []Op) []porcupine.Operation {
	var end int64
	for _, op := range ops {
		end = max(end, op.Return)
	}
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Kind == KindWitness || op.Outcome == Failed || (op.Outcome == Unknown && !op.Kind.Write()) {
			continue
		}
		in := opIn{kind: op.Kind, member: op.Member, arg: op.Arg}
		o := opOut{added: op.Added, score: op.Score, absent: op.Absent, rng: op.Range}
		ret := op.Return
		if op.Outcome == Unknown {
			o = opOut{unknown: true}
			ret = end + 1
		}
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Invoke, Output: o, Return: ret, Metadata: op.Key})
	}
	return out
}
