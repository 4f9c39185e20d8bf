package wire

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGrisuOracle compares appendShortest with Redis 7.2's own
// fpconv_dtoa, compiled from Redis's source into a program that reads
// doubles' bits in hex and prints fpconv_dtoa's text, one per line. Set
// GOBLIN_FPCONV_ORACLE to that program's path to run it.
func TestGrisuOracle(t *testing.T) {
	oracle := os.Getenv("GOBLIN_FPCONV_ORACLE")
	if oracle == "" {
		t.Skip("GOBLIN_FPCONV_ORACLE not set")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	var in strings.Builder
	var vals []float64
	for i := 0; i < 2000000; i++ {
		var f float64
		switch i % 4 {
		case 0:
			f = math.Float64frombits(r.Uint64())
		case 1:
			f = float64(r.IntN(2000000)-1000000) / float64([]int{10, 100, 1000, 7, 3}[r.IntN(5)])
		case 2:
			f = r.Float64() * math.Pow(10, float64(r.IntN(40)-20))
		default:
			f = math.Float64frombits(r.Uint64() & 0x000FFFFFFFFFFFFF) // subnormal
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
			continue
		}
		vals = append(vals, f)
		fmt.Fprintf(&in, "%x\n", math.Float64bits(f))
	}
	cmd := exec.Command(oracle)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	bad := 0
	for i := 0; sc.Scan(); i++ {
		got := string(appendShortest(nil, vals[i]))
		if got != sc.Text() {
			bad++
			if bad < 20 {
				t.Errorf("%x (%v): fpconv %q, goblin %q", math.Float64bits(vals[i]), vals[i], sc.Text(), got)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, len(vals))
	}
}
