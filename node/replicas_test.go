package node

import "testing"

func TestReplicasHolding(t *testing.T) {
	r := Replicas{Majority: 1, Others: 4, Alive: 3, Applied: []uint64{5, 9, 12}}
	for _, c := range []struct {
		index uint64
		want  int
	}{{0, 3}, {1, 3}, {5, 3}, {6, 2}, {10, 1}, {13, 1}} {
		if got := r.Holding(c.index); got != c.want {
			t.Errorf("Holding(%d) = %d, want %d", c.index, got, c.want)
		}
	}
	if got := (Replicas{Majority: 2, Others: 1}).Holding(3); got != 1 {
		t.Errorf("Holding counts %d nodes of 1 other", got)
	}
}

func TestReplicasHoldingDurably(t *testing.T) {
	// Two of four others reported their logs durable past 8; the majority
	// counts only when every other voter syncs always.
	r := Replicas{Majority: 2, Others: 4, Alive: 4, Applied: []uint64{9, 9, 12, 12}, Durable: []uint64{3, 8, 12, 0}}
	for _, c := range []struct {
		index uint64
		want  int
	}{{0, 4}, {3, 3}, {4, 2}, {8, 2}, {9, 1}, {13, 0}} {
		if got := r.HoldingDurably(c.index); got != c.want {
			t.Errorf("HoldingDurably(%d) = %d, want %d", c.index, got, c.want)
		}
	}
	r.MajorityDurable = r.Majority
	if got := r.HoldingDurably(13); got != 2 {
		t.Errorf("HoldingDurably past every report, voters syncing always: %d, want the majority 2", got)
	}
}
