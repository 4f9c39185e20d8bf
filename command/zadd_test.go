package command

import "testing"

// A ZADD or ZINCRBY of one pair parses without allocating: every write is
// parsed twice (the edge validates it, the state machine runs it), and
// these are the commands most writes are. Several pairs keep their scores
// and members paired.
func TestZAddParse(t *testing.T) {
	for _, c := range []struct {
		cmd   string
		parse func([][]byte) (zaddArgs, error)
	}{
		{"ZADD k 1.5 m", parseZAdd},
		{"ZADD k XX CH 1.5 m", parseZAdd},
		{"ZINCRBY k 1.5 m", parseZIncrBy},
	} {
		a := argvOf(c.cmd)
		if n := testing.AllocsPerRun(100, func() { c.parse(a) }); n != 0 {
			t.Errorf("%s: %v allocations a parse, want 0", c.cmd, n)
		}
		got, err := c.parse(a)
		if err != nil || got.len() != 1 || got.score(0) != 1.5 || string(got.member(0)) != "m" || string(got.key) != "k" {
			t.Errorf("%s: parsed %+v, %v", c.cmd, got, err)
		}
	}
	got, err := parseZAdd(argvOf("ZADD k 1 a 2 b 3 c"))
	if err != nil || got.len() != 3 {
		t.Fatalf("three pairs: %+v, %v", got, err)
	}
	for j, want := range []string{"a", "b", "c"} {
		if string(got.member(j)) != want || got.score(j) != float64(j+1) {
			t.Errorf("pair %d: %s %v, want %s %d", j, got.member(j), got.score(j), want, j+1)
		}
	}
	for cmd, want := range map[string]error{"ZADD k 1 a x b": ErrNotFloat, "ZADD k 1 a 2": ErrSyntax, "ZADD k INCR 1 a 2 b": ErrIncrPair} {
		if _, err := parseZAdd(argvOf(cmd)); err != want {
			t.Errorf("%s: %v, want %v", cmd, err, want)
		}
	}
}
