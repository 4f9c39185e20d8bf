package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/faults"
	"github.com/goblindb/goblin/internal/testutil"
)

// The drill e2e tests run `goblin drill` against real 3-node clusters,
// one fault family each, and require what the release drill requires:
// nothing acknowledged lost, no write reported failed that took effect,
// a linearizable history, replicas that agree. Together they drill for
// 70 s on every CI run.

var (
	goblinOnce sync.Once
	goblinBin  string
	goblinErr  error
)

// goblinBinary builds cmd/goblin once, next to goblind.
func goblinBinary(t *testing.T) string {
	t.Helper()
	goblinOnce.Do(func() {
		goblinBin = filepath.Join(filepath.Dir(goblindBin), "goblin")
		out, err := exec.Command("go", "build", "-o", goblinBin, "../cmd/goblin").CombinedOutput()
		if err != nil {
			goblinErr = fmt.Errorf("building goblin: %v\n%s", err, out)
		}
	})
	if goblinErr != nil {
		t.Fatal(goblinErr)
	}
	return goblinBin
}

// drillReport is the part of report.json the tests read.
type drillReport struct {
	Pass    bool   `json:"pass"`
	Verdict string `json:"verdict"`
	Ops     struct {
		Total, OK, Failed, Unknown int
	} `json:"ops"`
	Witness struct {
		Acked   int `json:"acked"`
		Lost    int `json:"lost"`
		Phantom int `json:"phantom"`
		Large   int `json:"large"`
		Torn    int `json:"torn"`
	} `json:"witness"`
	Linearizability struct {
		Result string `json:"result"`
		Keys   []struct {
			Key    string `json:"key"`
			Result string `json:"result"`
		} `json:"keys"`
	} `json:"linearizability"`
	Divergent []string `json:"divergent"`
	Faults    []struct {
		Kind    string   `json:"kind"`
		Targets []string `json:"targets"`
		Error   string   `json:"error"`
	} `json:"faults"`
	Summary map[string]struct {
		Count            int `json:"count"`
		WriteUnavailable struct {
			P50, P99, Max float64
		} `json:"write_unavailable_ms"`
	} `json:"summary"`
	Skipped map[string]string `json:"skipped"`
}

// runDrill runs goblin drill with args (plus --out and --seed) and
// returns its report; the drill's output is logged.
func runDrill(t *testing.T, env []string, args ...string) *drillReport {
	t.Helper()
	out := filepath.Join(t.TempDir(), "drill")
	seed := strconv.FormatUint(testutil.Rand(t, 3).Uint64(), 10)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goblinBinary(t), append([]string{"drill", "--out", out, "--seed", seed, "--check-timeout", "2m"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("goblin drill %s:\n%s%s", strings.Join(args, " "), stderr.String(), stdout.String())
	raw, rerr := os.ReadFile(filepath.Join(out, "report.json"))
	if rerr != nil {
		t.Fatalf("goblin drill wrote no report (exit %v): %v", err, rerr)
	}
	var rep drillReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Pass || err != nil {
		t.Errorf("drill verdict %q (exit %v); report:\n%s", rep.Verdict, err, raw)
		keepDrill(t, out, seed, &rep)
	}
	return &rep
}

// keepDrill copies a failed drill's files where the test's cleanup does
// not remove them, and logs the history of each key found not
// linearizable, so that a failure on a machine that is gone (CI) can
// still be read.
func keepDrill(t *testing.T, out, seed string, rep *drillReport) {
	t.Helper()
	kept := filepath.Join(os.TempDir(), "goblin-drill-"+strings.ReplaceAll(t.Name(), "/", "-")+"-"+seed)
	if err := os.CopyFS(kept, os.DirFS(out)); err != nil {
		t.Logf("keeping the drill's files: %v", err)
	} else {
		t.Logf("the drill's files are kept in %s", kept)
	}
	history, err := os.ReadFile(filepath.Join(out, "history.jsonl"))
	if err != nil {
		return
	}
	for _, k := range rep.Linearizability.Keys {
		i := strings.LastIndexByte(k.Key, 'k')
		if k.Result != "illegal" || i < 0 {
			continue
		}
		index, err := strconv.Atoi(k.Key[i+1:])
		if err != nil {
			continue
		}
		var lines []string
		for line := range strings.Lines(string(history)) {
			var op struct {
				Key int `json:"key"`
			}
			if json.Unmarshal([]byte(line), &op) == nil && op.Key == index {
				lines = append(lines, line)
			}
		}
		t.Logf("history of %s, not linearizable (%d operations):\n%s", k.Key, len(lines), strings.Join(lines, ""))
	}
}

// requireClean checks the verdict field by field, so a failure says what.
func requireClean(t *testing.T, rep *drillReport, kinds ...string) {
	t.Helper()
	if rep.Witness.Lost != 0 || rep.Witness.Phantom != 0 {
		t.Errorf("%d acknowledged writes lost, %d phantom writes", rep.Witness.Lost, rep.Witness.Phantom)
	}
	if rep.Witness.Torn != 0 {
		t.Errorf("%d of %d large writes (written in pieces) half applied", rep.Witness.Torn, rep.Witness.Large)
	}
	if rep.Linearizability.Result != "ok" {
		t.Errorf("linearizability: %s", rep.Linearizability.Result)
	}
	if len(rep.Divergent) > 0 {
		t.Errorf("replicas diverge: %v", rep.Divergent)
	}
	if rep.Witness.Acked < 100 {
		t.Errorf("only %d witness writes acknowledged: the workload did not run", rep.Witness.Acked)
	}
	for _, k := range kinds {
		if rep.Summary[k].Count == 0 {
			t.Errorf("no %s fault was injected (skipped: %q)", k, rep.Skipped[k])
		}
	}
	for _, f := range rep.Faults {
		if f.Error != "" {
			t.Errorf("%s %v: %s", f.Kind, f.Targets, f.Error)
		}
	}
}

// stopRestarted stops the nodes the drill restarted (they run in
// sessions of their own, outside the test harness), found by port.
func stopRestarted(t *testing.T, nodes []*ClusterNode) {
	t.Helper()
	for _, n := range nodes {
		pid, err := faults.PIDByAddr(n.Addr)
		if err != nil {
			continue
		}
		if n.Running() && n.cmd.Process.Pid == pid {
			continue
		}
		if err := faults.Kill(pid); err != nil {
			t.Errorf("stopping %s (pid %d) restarted by the drill: %v", n.ID, pid, err)
		}
	}
}

// drillCluster starts a 3-node cluster for a drill and returns its
// RESP addresses.
func drillCluster(t *testing.T) []*ClusterNode {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	t.Cleanup(func() { stopRestarted(t, nodes) })
	return nodes
}

func addrs(nodes []*ClusterNode) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Addr)
	}
	return strings.Join(out, ",")
}

// kill -9 of the leader (the drill restarts it with its command line),
// three times in 25 s. One witness write in eight is over 1 MiB, written
// in pieces: each is applied whole or not at all.
func TestDrillKill(t *testing.T) {
	nodes := drillCluster(t)
	rep := runDrill(t, nil, "--nodes", addrs(nodes), "--faults", "kill", "--duration", "25s",
		"--warmup", "2s", "--fault-every", "7s", "--fault-for", "2s", "--clients", "6", "--rate", "150",
		"--large-bytes", "1200000")
	requireClean(t, rep, "kill")
	if rep.Witness.Large < 20 {
		t.Errorf("only %d large writes", rep.Witness.Large)
	}
	t.Logf("writes unavailable after kill -9 of the leader: p50 %.0f ms, max %.0f ms", rep.Summary["kill"].WriteUnavailable.P50, rep.Summary["kill"].WriteUnavailable.Max)
}

// SIGSTOP of the leader, then of a follower, for 3 s each, in 20 s.
func TestDrillPause(t *testing.T) {
	nodes := drillCluster(t)
	rep := runDrill(t, nil, "--nodes", nodes[0].Addr, "--faults", "pause", "--target", "random", "--duration", "20s",
		"--warmup", "2s", "--fault-every", "6s", "--fault-for", "3s", "--clients", "6", "--rate", "150")
	requireClean(t, rep, "pause")
}

// The leader isolated, a minority split off, one link cut, in 25 s;
// clients keep reaching every node. Skipped where iptables or cgroups
// are not available.
func TestDrillPartition(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("partitions need root (iptables and the net_cls cgroup)")
	}
	nodes := drillCluster(t)
	rep := runDrill(t, nil, "--nodes", addrs(nodes), "--faults", "partition-leader,partition-minority,bridge", "--duration", "25s",
		"--warmup", "2s", "--fault-every", "7s", "--fault-for", "3s", "--clients", "6", "--rate", "150", "--large-bytes", "1200000")
	if why := rep.Skipped["partition-leader"]; why != "" {
		t.Skipf("partitions are not possible here: %s", why)
	}
	requireClean(t, rep, "partition-leader", "partition-minority", "bridge")
}

// The drill against the compose cluster, unchanged: services found from
// the project, the password from GOBLIN_REQUIREPASS, faults through
// docker. Skipped without a Docker engine.
func TestDrillCompose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs containers; skipped in -short mode")
	}
	if out, err := dockerRun(t, 20*time.Second, nil, "docker", "info", "--format", "{{.ServerVersion}}"); err != nil {
		t.Skipf("no Docker engine answers (docker info: %v: %s)", err, strings.TrimSpace(out))
	}
	if out, err := dockerRun(t, 20*time.Second, nil, "docker-compose", "version"); err != nil {
		t.Skipf("docker-compose is not available: %v: %s", err, strings.TrimSpace(out))
	}
	image, project := testutil.DockerNames(t, "goblin-drill-e2e")
	if out, err := dockerRun(t, 5*time.Minute, nil, "scripts/docker-image.sh", image); err != nil {
		t.Fatalf("building the image: %v\n%s", err, out)
	}
	t.Cleanup(func() { dockerRun(t, time.Minute, nil, "docker", "rmi", "-f", image) })
	secrets := t.TempDir()
	if out, err := dockerRun(t, time.Minute, nil, "scripts/docker-secrets.sh", secrets); err != nil {
		t.Fatalf("writing the secrets: %v\n%s", err, out)
	}
	pass, err := os.ReadFile(filepath.Join(secrets, "requirepass"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GOBLIN_IMAGE=" + image, "GOBLIN_SECRETS=" + secrets}
	for i := 1; i <= 3; i++ {
		_, p, _ := net.SplitHostPort(testutil.FreeAddr(t, ""))
		env = append(env, fmt.Sprintf("GOBLIN%d_PORT=%s", i, p))
	}
	compose := func(timeout time.Duration, args ...string) (string, error) {
		return dockerRun(t, timeout, env, "docker-compose", append([]string{"-p", project, "-f", "docker-compose.yml"}, args...)...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := compose(time.Minute, "logs", "--no-color")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := compose(3*time.Minute, "down", "-v", "--remove-orphans", "--timeout", "30"); err != nil {
			t.Errorf("docker-compose down: %v\n%s", err, out)
		}
	})
	if out, err := compose(3*time.Minute, "up", "-d"); err != nil {
		t.Fatalf("docker-compose up: %v\n%s", err, out)
	}
	rep := runDrill(t, []string{"GOBLIN_REQUIREPASS=" + strings.TrimSpace(string(pass))}, "--compose-project", project,
		"--faults", "kill,pause,partition-leader", "--duration", "36s", "--warmup", "3s",
		"--fault-every", "10s", "--fault-for", "3s", "--clients", "6", "--rate", "100")
	requireClean(t, rep, "kill", "pause", "partition-leader")
}
