package packed

import (
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/threadcpu"
)

// The sorted-set workloads (rescores, ties, insertions, deletions, no-op
// updates, ranks; results in docs/benchmarks.md) as go test benchmarks,
// run on Goblin's sets and, in the same run, on the structure a Go
// developer would otherwise write: a map from member to score beside a
// tidwall/btree of (score, member) items (see baseline_test.go). Every
// operation takes the member as text, as the server does, so parsing is
// timed on both sides.
//
//	go test -run '^$' -bench Workloads -count 5 ./packed/
//
// Each reports ns/op and B/member: Bytes()/Len() for Goblin, and the heap
// growth measured around building the structure for the baseline.

// zimpl is what a workload needs from a sorted set.
type zimpl interface {
	set(m []byte, s float64)
	incr(m []byte, d float64)
	remove(m []byte)
	rank(m []byte) int
	mark() // start measuring memory (baseline only)
	bytesPerMember() float64
}

type goblinImpl struct{ z *ZSet }

func (g goblinImpl) set(m []byte, s float64)  { g.z.Add(m, s, 0) }
func (g goblinImpl) incr(m []byte, d float64) { g.z.Add(m, d, AddIncr) }
func (g goblinImpl) remove(m []byte)          { g.z.Remove(m) }
func (g goblinImpl) rank(m []byte) int {
	r, _, _ := g.z.Rank(m)
	return r
}
func (g goblinImpl) mark()                   {}
func (g goblinImpl) bytesPerMember() float64 { return float64(g.z.Bytes()) / float64(g.z.Len()) }

// benchLeafCap is the leaf capacity benchmarked: DefaultLeafCap, or
// $GOBLIN_LEAFCAP to compare capacities.
func benchLeafCap() int {
	if n, err := strconv.Atoi(os.Getenv("GOBLIN_LEAFCAP")); err == nil {
		return n
	}
	return DefaultLeafCap
}

// impls are the implementations compared, by name.
var impls = []struct {
	name string
	new  func(l Layout) zimpl
}{
	{"goblin", func(l Layout) zimpl { return goblinImpl{NewWithCapacity(l, benchLeafCap())} }},
	{"btree", newBaseline},
}

// members returns n distinct member texts for the layout: shuffled
// integers for INT32, and for standard 1 to 10 random bytes.
func members(l Layout, n int, r *rand.Rand) [][]byte {
	out := make([][]byte, n)
	seen := map[string]bool{}
	for i := range out {
		if l == Standard {
			for {
				b := make([]byte, 1+r.IntN(10))
				for j := range b {
					b[j] = byte(r.IntN(256))
				}
				if !seen[string(b)] {
					seen[string(b)] = true
					out[i] = b
					break
				}
			}
			continue
		}
		out[i] = strconv.AppendInt(nil, int64(i)*7919%int64(n)+1_000_000, 10)
	}
	return out
}

// workload is one benchmark: setup builds the set, op runs operation i.
type workload struct {
	name  string
	setup func(z zimpl, r *rand.Rand) func(i int)
}

func fill(z zimpl, ms [][]byte, score func(i int) float64) {
	z.mark()
	for i, m := range ms {
		z.set(m, score(i))
	}
}

func workloads(l Layout) []workload {
	rescore := func(n int) func(z zimpl, r *rand.Rand) func(int) {
		return func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, n, r)
			idx, sc := randomInts(r, n, 1<<16), randomInts(r, 1000, 1<<16)
			fill(z, ms, func(int) float64 { return float64(r.IntN(1000)) })
			return func(i int) { z.set(ms[idx[i&0xffff]], float64(sc[i&0xffff])) }
		}
	}
	return []workload{
		{"same-leaf-rescore", rescore(384)},
		{"tied-increment", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, 20000, r)
			idx := randomInts(r, len(ms), 1<<16)
			fill(z, ms, func(int) float64 { return 0 })
			return func(i int) { z.incr(ms[idx[i&0xffff]], 1) }
		}},
		{"random-rescore", rescore(20000)},
		{"new-insertion", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, bulkN, r)
			sc := randomInts(r, 1<<20, 1<<16)
			z.mark()
			return func(i int) { z.set(ms[i%bulkN], float64(sc[i&0xffff])) }
		}},
		{"delete-reinsert", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, 20000, r)
			idx, sc := randomInts(r, len(ms), 1<<16), randomInts(r, 1000, 1<<16)
			fill(z, ms, func(int) float64 { return float64(r.IntN(1000)) })
			return func(i int) {
				m := ms[idx[i&0xffff]]
				z.remove(m)
				z.set(m, float64(sc[i&0xffff]))
			}
		}},
		{"sequential-deletion", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, bulkN, r)
			fill(z, ms, func(i int) float64 { return float64(i) })
			return func(i int) { z.remove(ms[i%bulkN]) }
		}},
		{"noop-update", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, 20000, r)
			idx := randomInts(r, len(ms), 1<<16)
			fill(z, ms, func(i int) float64 { return float64(i % 1000) })
			return func(i int) { z.set(ms[idx[i&0xffff]], float64(idx[i&0xffff]%1000)) }
		}},
		{"rank", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, 20000, r)
			idx := randomInts(r, len(ms), 1<<16)
			fill(z, ms, func(int) float64 { return float64(r.IntN(1000)) })
			return func(i int) { z.rank(ms[idx[i&0xffff]]) }
		}},
		{"rank-1M", func(z zimpl, r *rand.Rand) func(int) {
			ms := members(l, 1<<20, r)
			idx := randomInts(r, len(ms), 1<<16)
			fill(z, ms, func(int) float64 { return float64(r.IntN(1 << 20)) })
			return func(i int) { z.rank(ms[idx[i&0xffff]]) }
		}},
	}
}

// bulkN is the member count of the insertion and deletion workloads.
const bulkN = 200000

func randomInts(r *rand.Rand, bound, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = r.IntN(bound)
	}
	return out
}

func BenchmarkWorkloads(b *testing.B) {
	for _, l := range []Layout{Int32Float32, Standard} {
		for _, w := range workloads(l) {
			for _, im := range impls {
				b.Run(l.String()+"/"+w.name+"/"+im.name, func(b *testing.B) {
					runWorkload(b, l, w, im.new)
				})
			}
		}
	}
}

// runWorkload runs a workload; the sequential-deletion and new-insertion
// workloads rebuild their set (untimed) whenever it runs out of members.
// Besides wall time it reports cpu-ns/op, the thread's CPU time per
// operation, which a busy shared machine disturbs much less.
func runWorkload(b *testing.B, l Layout, w workload, mk func(Layout) zimpl) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewPCG(1, 2))
	z := mk(l)
	op := w.setup(z, r)
	bpm := z.bytesPerMember()
	b.ResetTimer()
	cpu := -threadcpu.Now()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%bulkN == 0 && (w.name == "sequential-deletion" || w.name == "new-insertion") {
			b.StopTimer()
			cpu += threadcpu.Now()
			z = mk(l)
			op = w.setup(z, rand.New(rand.NewPCG(1, 2)))
			debug.FreeOSMemory() // collect and return memory now, not in the timed loop
			cpu -= threadcpu.Now()
			b.StartTimer()
		}
		op(i)
	}
	cpu += threadcpu.Now()
	b.StopTimer()
	if w.name == "new-insertion" {
		bpm = z.bytesPerMember()
		runtime.KeepAlive(op) // the member texts must not be freed before measuring
	}
	b.ReportMetric(bpm, "B/member")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkGrowth grows a set to 4,000,000 members, one insertion at a
// time, then removes them all, and reports the slowest single insertion
// and removal (worst-add-ns, worst-remove-ns) besides the mean per
// operation: what one command can wait behind an index resize or an arena
// compaction. Each operation is timed with time.Now, which adds some tens
// of nanoseconds to the means.
func BenchmarkGrowth(b *testing.B) {
	for _, l := range []Layout{Int32Float32, Standard} {
		b.Run(l.String(), func(b *testing.B) {
			const n = 4_000_000
			ms := make([][]byte, n)
			for i := range ms {
				ms[i] = strconv.AppendInt(nil, int64(i)*7919%n, 10)
			}
			var worstAdd, worstRemove time.Duration
			b.ResetTimer()
			for range b.N {
				z := New(l)
				for i, m := range ms {
					t0 := time.Now()
					z.Add(m, float64(i%1000), 0)
					worstAdd = max(worstAdd, time.Since(t0))
				}
				for _, m := range ms {
					t0 := time.Now()
					z.Remove(m)
					worstRemove = max(worstRemove, time.Since(t0))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*n*b.N), "ns/op")
			b.ReportMetric(float64(worstAdd.Nanoseconds()), "worst-add-ns")
			b.ReportMetric(float64(worstRemove.Nanoseconds()), "worst-remove-ns")
		})
	}
}

// BenchmarkClone clones a set of 1,000,000 members (clone: the deep copy
// COPY makes) and takes a view of it (snapshot: what a Raft snapshot
// costs each set while applies wait, raftfsm taking a view of the
// keyspace).
func BenchmarkClone(b *testing.B) {
	for _, l := range []Layout{Int32Float32, Standard} {
		z := New(l)
		for i := range 1_000_000 {
			z.Add(strconv.AppendInt(nil, int64(i)*7919%1_000_003, 10), float64(i%1000), 0)
		}
		b.Run(l.String()+"/clone", func(b *testing.B) {
			for range b.N {
				runtime.KeepAlive(z.Clone())
			}
		})
		b.Run(l.String()+"/snapshot", func(b *testing.B) {
			for range b.N {
				runtime.KeepAlive(z.Snapshot())
			}
		})
	}
}
