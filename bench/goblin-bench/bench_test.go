package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/servetest"
	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/packed"
)

// startGoblin runs a single-node Goblin in process (servetest.Start)
// and returns its address.
func startGoblin(t *testing.T) string {
	s, _ := servetest.Start(t, node.Config{ID: "bench", Fsync: node.FsyncEverysec,
		Rules: keyspace.Rules{{Pattern: "wiki:*", Layout: packed.Int32Float32}}})
	return s.Addr().String()
}

// startRedis runs the reference redis-server (testutil.StartRedis) and
// returns its address.
func startRedis(t *testing.T) string { return testutil.StartRedis(t).Addr }

// TestToolAgainstEngines runs every subcommand at a small scale against
// an in-process Goblin and against redis-server, then reports: both must
// pass every final-state check and end with the same replay digest.
func TestToolAgainstEngines(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results.jsonl")
	engines := map[string]func(*testing.T) string{engGoblinEvery: startGoblin, engRedis: startRedis}
	for _, name := range []string{engGoblinEvery, engRedis} {
		t.Run(name, func(t *testing.T) {
			addr := engines[name](t)
			base := []string{"--addr", addr, "--engine", name, "--out", out, "--quiet"}
			steps := [][]string{
				append([]string{"replay", "--n", "20000"}, base...),
				append([]string{"memory", "--key", "wiki:pages", "--settle", "0s"}, base...),
				append([]string{"replay", "--n", "20000", "--clients", "4", "--pipeline", "16"}, base...),
				append([]string{"load", "--members", "2000", "--clients", "4", "--pipeline", "8", "--requests", "3000", "--duration", "20s"}, base...),
			}
			for _, s := range steps {
				if err := dispatch(s); err != nil {
					t.Fatalf("%v: %v", s[:1], err)
				}
			}
		})
	}
	recs, err := readRecords([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]bool{}
	for _, r := range recs {
		if r.Kind == "run" && r.Verified != "ok" {
			t.Errorf("%s %s: %s", r.Engine, r.Workload, r.Verified)
		}
		if r.Kind == "run" && r.Workload == "replay-rpc" {
			digests[r.State.Digest] = true
		}
	}
	if len(digests) != 1 {
		t.Errorf("replay digests differ between engines: %v", digests)
	}
	md, png := filepath.Join(dir, "table.md"), filepath.Join(dir, "chart.png")
	if err := dispatch([]string{"report", "--md", md, "--png", png, out}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	for _, want := range []string{"| replay-rpc |", "| zrangebyscore |", "Targets", "reply-per-command replay"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q:\n%s", want, b)
		}
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Errorf("chart: %v", err)
	}
}
