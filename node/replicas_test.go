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
