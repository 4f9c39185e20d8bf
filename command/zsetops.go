package command

import (
	"math"
	"sort"

	"github.com/goblindb/goblin/packed"
)

// ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD: Redis's
// zunionInterDiffGenericCommand, including the order in which it combines
// scores (inputs sorted by size, stably), so sums round the same way.

type setOp uint8

const (
	opUnion setOp = iota
	opInter
	opDiff
)

type aggregate uint8

const (
	aggSum aggregate = iota
	aggMin
	aggMax
)

// setOpForm says which command of the family is running.
type setOpForm struct {
	name  string // for the "at least 1 input key" error
	op    setOp
	store bool // the first argument is a destination key
	card  bool // ZINTERCARD: count only
}

func init() {
	forms := []setOpForm{
		{name: "zunion", op: opUnion},
		{name: "zinter", op: opInter},
		{name: "zdiff", op: opDiff},
		{name: "zunionstore", op: opUnion, store: true},
		{name: "zinterstore", op: opInter, store: true},
		{name: "zdiffstore", op: opDiff, store: true},
		{name: "zintercard", op: opInter, card: true},
	}
	for _, f := range forms {
		f := f
		s := &Spec{Name: f.name, Flags: ReadOnly,
			Run: func(c *Ctx, argv [][]byte) { runSetOp(c, argv, f) }}
		if f.store {
			s.Flags = Write | DenyOOM
			s.Validate = func(argv [][]byte) error { _, err := parseSetOp(argv, f); return err }
		}
		register(s)
	}
}

type setOpArgs struct {
	dst        []byte
	keys       [][]byte
	weights    []float64
	agg        aggregate
	withscores bool
	limit      int64
}

var (
	errWeightFloat = &Error{"ERR weight value is not a float"}
	errLimitNeg    = &Error{"ERR LIMIT can't be negative"}
)

// parseSetOpKeys reads the destination, numkeys and the keys: what Redis
// checks before it looks at any key.
func parseSetOpKeys(argv [][]byte, f setOpForm) (setOpArgs, error) {
	var a setOpArgs
	at := 1
	if f.store {
		a.dst = argv[1]
		at = 2
	}
	n, ok := parseInt(argv[at])
	if !ok {
		return a, ErrNotInteger
	}
	if n < 1 {
		return a, Errorf("ERR at least 1 input key is needed for '%s' command", f.name)
	}
	if n > int64(len(argv)-at-1) {
		return a, ErrSyntax
	}
	a.keys = argv[at+1 : at+1+int(n)]
	return a, nil
}

// parseSetOp parses the whole command: keys, then WEIGHTS, AGGREGATE,
// WITHSCORES and LIMIT as each form allows them.
func parseSetOp(argv [][]byte, f setOpForm) (setOpArgs, error) {
	a, err := parseSetOpKeys(argv, f)
	if err != nil {
		return a, err
	}
	setnum := len(a.keys)
	a.weights = make([]float64, setnum)
	for i := range a.weights {
		a.weights[i] = 1
	}
	j := 1 + len(a.keys) + 1
	if f.store {
		j++
	}
	for j < len(argv) {
		remaining := len(argv) - j
		switch {
		case f.op != opDiff && !f.card && remaining >= setnum+1 && eq(argv[j], "weights"):
			j++
			for i := 0; i < setnum; i++ {
				w, ok := parseFloat(argv[j])
				if !ok {
					return a, errWeightFloat
				}
				a.weights[i] = w
				j++
			}
		case f.op != opDiff && !f.card && remaining >= 2 && eq(argv[j], "aggregate"):
			switch {
			case eq(argv[j+1], "sum"):
				a.agg = aggSum
			case eq(argv[j+1], "min"):
				a.agg = aggMin
			case eq(argv[j+1], "max"):
				a.agg = aggMax
			default:
				return a, ErrSyntax
			}
			j += 2
		case !f.store && !f.card && eq(argv[j], "withscores"):
			a.withscores = true
			j++
		case f.card && remaining >= 2 && eq(argv[j], "limit"):
			n, ok := parseInt(argv[j+1])
			if !ok || n < 0 {
				return a, errLimitNeg
			}
			a.limit = n
			j += 2
		default:
			return a, ErrSyntax
		}
	}
	return a, nil
}

// source is one input set with its weight.
type source struct {
	z      *packed.ZSet // nil for a missing key
	weight float64
}

func (s source) len() int {
	if s.z == nil {
		return 0
	}
	return s.z.Len()
}

func (a aggregate) apply(target *float64, v float64) {
	switch a {
	case aggSum:
		*target += v
		// inf + -inf: Redis keeps the convention that the sum is 0.
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggMin:
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

// weighted multiplies a score by a weight; NaN (inf times 0) counts as 0.
func weighted(score, weight float64) float64 {
	v := score * weight
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func runSetOp(c *Ctx, argv [][]byte, f setOpForm) {
	a, err := parseSetOp(argv, f)
	if err != nil {
		c.W.Error(err)
		return
	}
	src := make([]source, len(a.keys))
	for i, k := range a.keys {
		src[i] = source{z: c.zset(k), weight: a.weights[i]}
	}
	if f.op != opDiff {
		// Smallest first, as Redis's qsort (a stable merge sort in glibc)
		// leaves them: it decides the order scores are combined in.
		sort.SliceStable(src, func(i, j int) bool { return src[i].len() < src[j].len() })
	}
	if f.card {
		c.W.Int(interCard(src, a.limit))
		return
	}
	layout := packed.Standard
	if f.store {
		layout = c.layoutFor(a.dst)
	}
	out := packed.New(layout)
	var addErr error
	add := func(m []byte, s float64) bool {
		if _, err := out.Add(m, s, 0); err != nil {
			addErr = err
			return false
		}
		return true
	}
	switch f.op {
	case opInter:
		inter(src, a.agg, add)
	case opUnion:
		union(src, a.agg, add)
	case opDiff:
		diff(src, add)
	}
	if addErr != nil {
		c.W.Error(ErrPackedMember)
		return
	}
	if !f.store {
		writeRange(c.W, out, selection{0, out.Len(), false}, a.withscores)
		return
	}
	if out.Len() == 0 {
		c.db().Delete(a.dst, c.Index)
		c.W.Int(0)
		return
	}
	storeZSet(c, a.dst, out)
	c.W.Int(int64(out.Len()))
}

// inter calls add for every member of the smallest input found in all
// the others, with its combined score.
func inter(src []source, agg aggregate, add func([]byte, float64) bool) {
	if src[0].len() == 0 {
		return
	}
	src[0].z.Range(0, src[0].len(), false, func(m []byte, s float64) bool {
		score := weighted(s, src[0].weight)
		for _, o := range src[1:] {
			v, ok := o.z.Score(m)
			if !ok {
				return true
			}
			agg.apply(&score, v*o.weight)
		}
		return add(m, score)
	})
}

// interCard counts the intersection, stopping at limit (0: no limit).
func interCard(src []source, limit int64) int64 {
	var n int64
	if src[0].len() == 0 {
		return 0
	}
	src[0].z.Range(0, src[0].len(), false, func(m []byte, _ float64) bool {
		for _, o := range src[1:] {
			if _, ok := o.z.Score(m); !ok {
				return true
			}
		}
		n++
		return limit == 0 || n < limit
	})
	return n
}

// union combines every input, in order, into one score per member.
func union(src []source, agg aggregate, add func([]byte, float64) bool) {
	acc := map[string]float64{}
	var order []string
	for _, s := range src {
		if s.len() == 0 {
			continue
		}
		s.z.Range(0, s.len(), false, func(m []byte, v float64) bool {
			score := weighted(v, s.weight)
			if cur, ok := acc[string(m)]; ok {
				agg.apply(&cur, score)
				acc[string(m)] = cur
			} else {
				acc[string(m)] = score
				order = append(order, string(m))
			}
			return true
		})
	}
	for _, m := range order {
		if !add([]byte(m), acc[m]) {
			return
		}
	}
}

// diff keeps the members of the first input that no other input has.
func diff(src []source, add func([]byte, float64) bool) {
	if src[0].len() == 0 {
		return
	}
	src[0].z.Range(0, src[0].len(), false, func(m []byte, s float64) bool {
		for _, o := range src[1:] {
			if o.z == nil {
				continue
			}
			if _, ok := o.z.Score(m); ok {
				return true
			}
		}
		return add(m, s)
	})
}
