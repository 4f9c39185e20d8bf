package drill

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestLongestGap(t *testing.T) {
	times := []int64{10, 20, 50, 55, 90}
	for _, c := range []struct{ from, to, want int64 }{
		{0, 100, 35},  // 55 → 90
		{15, 52, 30},  // 20 → 50
		{56, 100, 34}, // 56 → 90
		{91, 100, 9},  // nothing after: the whole window
		{0, 5, 5},
	} {
		if got := longestGap(times, c.from, c.to); got != c.want {
			t.Errorf("longestGap(%d, %d) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}

func TestPercentiles(t *testing.T) {
	var v []float64
	for i := 1; i <= 200; i++ {
		v = append(v, float64(i))
	}
	p := percentiles(v)
	if p.P50 != 100 || p.P99 != 198 || p.Max != 200 {
		t.Fatalf("percentiles %+v", p)
	}
	if p := percentiles([]float64{7}); p.P50 != 7 || p.P99 != 7 || p.Max != 7 {
		t.Fatalf("one value: %+v", p)
	}
	if p := percentiles(nil); p != (Percentiles{}) {
		t.Fatalf("no value: %+v", p)
	}
}

// A fault's window: writes stop for 1.5 s after a kill.
func TestAvailability(t *testing.T) {
	var ops []Op
	for ms := int64(0); ms < 10000; ms += 10 {
		if ms > 3000 && ms < 4500 {
			ops = append(ops, Op{Kind: KindZAdd, Invoke: ms * 1e6, Return: ms*1e6 + 1e6, Outcome: Failed})
			continue
		}
		ops = append(ops, Op{Kind: KindZAdd, Invoke: ms * 1e6, Return: ms*1e6 + 1e6})
		ops = append(ops, Op{Kind: KindZScore, Invoke: ms * 1e6, Return: ms*1e6 + 2e6})
	}
	f := &Fault{Kind: FaultKill, start: 3000.5e6, heal: 5000e6, end: 8000e6}
	availability(ops, []*Fault{f})
	a := f.Avail
	if a.WriteGapMS < 1499 || a.WriteGapMS > 1502 || a.FirstWriteMS < 1500 || a.FirstWriteMS > 1502 || a.Failed != 149 {
		t.Fatalf("availability %+v", a)
	}
	s := summarise([]*Fault{f, {Kind: FaultKill, Error: "x"}})
	if s[FaultKill].Count != 1 || s[FaultKill].Failed != 1 || s[FaultKill].WriteUnavailable.Max != a.WriteGapMS {
		t.Fatalf("summary %+v", s[FaultKill])
	}
}

// The picture is well-formed SVG whatever the history holds.
func TestTimelineSVG(t *testing.T) {
	d := &Drill{nodes: []*node{{ID: "n1"}, {ID: "n2"}, {ID: "n<3>"}}}
	d.hist.add(Op{Kind: KindZAdd, Invoke: 1e6, Return: 2e6})
	d.hist.add(Op{Kind: KindZScore, Invoke: 1e9, Return: 3e9, Outcome: Unknown})
	d.mon.samples = []sample{{at: 0, node: "n1", up: true, leader: true}, {at: 1e9, node: "n2"}}
	r := &Report{Seconds: 4, Verdict: "a & b", Faults: []*Fault{{N: 1, Kind: FaultKill, Targets: []string{"n1"}, start: 1e9, heal: 2e9, end: 4e9}}}
	for _, rep := range []*Report{r, {Seconds: 0}} {
		out := timelineSVG(d, rep)
		dec := xml.NewDecoder(strings.NewReader(string(out)))
		for {
			_, err := dec.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("not well-formed: %v\n%s", err, out)
				}
				break
			}
		}
	}
}
