package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/resp"
)

// startGoblin runs a single-node Goblin in process (in-memory Raft
// transport, RESP on a free loopback port) and returns its address.
func startGoblin(t *testing.T) string {
	t.Helper()
	_, trans := raft.NewInmemTransport("")
	n, err := node.New(node.Config{
		ID: "bench", DataDir: t.TempDir(), Fsync: node.FsyncEverysec, Bootstrap: true, Transport: trans,
		HeartbeatTimeout: 50 * time.Millisecond, ElectionTimeout: 50 * time.Millisecond,
		Rules:  keyspace.Rules{{Pattern: "wiki:*", Layout: packed.Int32Float32}},
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := resp.NewServer(resp.Config{Addr: "127.0.0.1:0"}, n)
	if err := srv.Listen(); err != nil {
		n.Close()
		t.Fatal(err)
	}
	srv.Serve()
	t.Cleanup(func() {
		srv.Close()
		n.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for !n.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("node did not become ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return srv.Addr().String()
}

// startRedis runs redis-server without persistence on a free port, or
// skips (fails with GOBLIN_REQUIRE_REDIS=1) when it is not installed.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server not found")
		}
		t.Skip("redis-server not installed")
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + port
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := dial(addr); err == nil {
			_, err = c.do("PING")
			c.close()
			if err == nil {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()[strings.LastIndexByte(ln.Addr().String(), ':')+1:]
}

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
