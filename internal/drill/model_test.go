package drill

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// op builds a history entry on key 0 (times in ms).
func op(client int, kind Kind, member int, arg float64, call, ret int64, out Op) Op {
	out.Client, out.Kind, out.Member, out.Arg = client, kind, member, arg
	out.Invoke, out.Return = call*1e6, ret*1e6
	return out
}

func TestModelAcceptsALinearizableHistory(t *testing.T) {
	ops := []Op{
		op(0, KindZAdd, 0, 5, 0, 10, Op{Added: 1}),
		op(1, KindZIncrBy, 0, 2, 5, 15, Op{Score: 7}),
		op(2, KindZScore, 0, 0, 16, 20, Op{Score: 7}),
		op(0, KindZRange, 0, 0, 21, 25, Op{Range: []Scored{{0, 7}}}),
		op(1, KindZScore, 1, 0, 21, 25, Op{Absent: true}),
		op(2, KindZAdd, 1, 3, 26, 30, Op{Added: 1}),
		op(0, KindZRange, 0, 0, 31, 35, Op{Range: []Scored{{1, 3}, {0, 7}}}),
	}
	if !porcupine.CheckOperations(zsetModel, porcupineOps(ops)) {
		t.Fatal("a linearizable history was refused")
	}
}

// A write reported failed with a "not applied" error whose effect is
// later seen is a violation: the checker leaves the failed write out.
func TestModelCatchesAPhantomWrite(t *testing.T) {
	ops := []Op{
		op(0, KindZAdd, 0, 5, 0, 10, Op{Added: 1}),
		op(1, KindZIncrBy, 0, -2, 11, 20, Op{Outcome: Failed, Error: "TRYAGAIN leadership changed"}),
		op(2, KindZScore, 0, 0, 21, 25, Op{Score: 3}),
	}
	if porcupine.CheckOperations(zsetModel, porcupineOps(ops)) {
		t.Fatal("a failed write that took effect was accepted")
	}
	// The same write with an unknown outcome may have taken effect.
	ops[1].Outcome = Unknown
	if !porcupine.CheckOperations(zsetModel, porcupineOps(ops)) {
		t.Fatal("a write of unknown outcome that took effect was refused")
	}
	// ...or not.
	ops[2].Score = 5
	if !porcupine.CheckOperations(zsetModel, porcupineOps(ops)) {
		t.Fatal("a write of unknown outcome that did not take effect was refused")
	}
}

func TestModelCatchesAStaleRead(t *testing.T) {
	ops := []Op{
		op(0, KindZAdd, 0, 1, 0, 10, Op{Added: 1}),
		op(0, KindZAdd, 0, 2, 11, 20, Op{Added: 0}),
		op(1, KindZRange, 0, 0, 21, 25, Op{Range: []Scored{{0, 1}}}),
	}
	if porcupine.CheckOperations(zsetModel, porcupineOps(ops)) {
		t.Fatal("a read of an overwritten value was accepted")
	}
	// A lost write: ZADD said it added, then a second ZADD of the same
	// member says it added again.
	ops = []Op{
		op(0, KindZAdd, 0, 1, 0, 10, Op{Added: 1}),
		op(1, KindZAdd, 0, 2, 11, 20, Op{Added: 1}),
	}
	if porcupine.CheckOperations(zsetModel, porcupineOps(ops)) {
		t.Fatal("two ZADDs that both created the member were accepted")
	}
}

// ZRANGE orders by score, then by member name.
func TestModelRangeOrder(t *testing.T) {
	var s zstate
	s[2] = slot{true, 1}
	s[0] = slot{true, 1}
	s[1] = slot{true, -3}
	got := s.sorted()
	want := []Scored{{1, -3}, {0, 1}, {2, 1}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("sorted %v, want %v", got, want)
	}
}

func TestPorcupineOpsLeavesOutWhatDidNotHappen(t *testing.T) {
	ops := []Op{
		op(0, KindZAdd, 0, 1, 0, 10, Op{Outcome: Failed}),
		op(0, KindZScore, 0, 0, 11, 12, Op{Outcome: Unknown}),
		op(0, KindWitness, 0, 0, 13, 14, Op{Witness: "c0-1"}),
		op(0, KindZIncrBy, 0, 1, 15, 16, Op{Outcome: Unknown}),
	}
	ops[2].Key = -1
	got := porcupineOps(ops)
	if len(got) != 1 || got[0].Input.(opIn).kind != KindZIncrBy || !got[0].Output.(opOut).unknown || got[0].Return <= 16e6 {
		t.Fatalf("porcupine ops %+v", got)
	}
}
