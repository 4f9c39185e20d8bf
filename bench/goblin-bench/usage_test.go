package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -h lists every subcommand with its flags.
func TestUsageListsEverySubcommandsFlags(t *testing.T) {
	var b bytes.Buffer
	usage(&b)
	for _, want := range []string{"Usage of replay:", "Usage of load:", "Usage of memory:", "Usage of report:", "-pipeline", "-png", "-settle"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, b.String())
		}
	}
}

// A report of Goblin engines alone draws their throughput in commands per
// second (with redis measured, as ratios to it).
func TestReportChartsGoblinOnlyRuns(t *testing.T) {
	recs := []record{
		{Kind: "run", Engine: engGoblinAlways, Workload: "zadd", Rep: 1, OpsPerSec: 20000},
		{Kind: "run", Engine: engGoblinAlways, Workload: "zscore", Rep: 1, OpsPerSec: 50000},
	}
	rp := buildReport(recs, []string{engGoblinAlways})
	relative, values := rp.throughput()
	if relative || len(values) != 1 || values[0][0] != 20 || values[0][1] != 50 {
		t.Fatalf("goblin-only throughput: relative %v, values %v; want thousands of commands/s [20 50]", relative, values)
	}
	png := filepath.Join(t.TempDir(), "chart.png")
	if err := rp.chart(png, "goblin"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("chart not written: %v", err)
	}

	recs = append(recs, record{Kind: "run", Engine: engRedis, Workload: "zadd", Rep: 1, OpsPerSec: 40000})
	rp = buildReport(recs, []string{engRedis, engGoblinAlways})
	relative, values = rp.throughput()
	if !relative || values[1][0] != 0.5 {
		t.Fatalf("with redis: relative %v, values %v; want goblin's zadd at 0.5× redis", relative, values)
	}
}
