package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// requireTool returns the path of a program the test needs, skipping the
// test when it is not installed, unless GOBLIN_REQUIRE_REDIS=1 (CI), where
// it fails.
func requireTool(t *testing.T, bin, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") == "1" {
			t.Fatalf("%s not found and GOBLIN_REQUIRE_REDIS=1", bin)
		}
		t.Skipf("%s not installed (apt-get install -y %s)", bin, pkg)
	}
	return path
}

// startTool runs a program for the rest of the test, stopping it at the
// end; its output is logged if the test failed.
func startTool(t *testing.T, path string, args ...string) {
	t.Helper()
	cmd := exec.Command(path, args...)
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(path), out.String())
		}
	})
}

// httpGet returns the body of a GET of u.
func httpGet(u string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return string(b), err
}

// sample returns the value of the exposition line for series (a metric
// name with its labels, as exposed), or an error if there is none.
func sample(exposition, series string) (float64, error) {
	sc := bufio.NewScanner(strings.NewReader(exposition))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s in the scrape", series)
}

// TestRedisExporter scrapes goblind with redis_exporter (Debian's
// prometheus-redis-exporter): the scrape succeeds, and the figures
// dashboards read are Goblin's own.
func TestRedisExporter(t *testing.T) {
	exporter := requireTool(t, "prometheus-redis-exporter", "prometheus-redis-exporter")
	g := StartGoblind(t, NodeOptions{})
	ctx := context.Background()
	c := g.Client(func(o *redis.Options) { o.PoolSize = 1 })
	for i := range 3 {
		if err := c.ZAdd(ctx, "k"+strconv.Itoa(i), redis.Z{Score: 1, Member: "m"}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Do(ctx, "SELECT", "2").Err(); err != nil {
		t.Fatal(err)
	}
	c.ZAdd(ctx, "other", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	c.Do(ctx, "SELECT", "0")
	for range 5 {
		c.ZScore(ctx, "k0", "m")
	}

	listen := testutil.FreeAddr(t, "")
	startTool(t, exporter, "-redis.addr", "redis://"+g.Addr, "-web.listen-address", listen)
	var scrape string
	testutil.Eventually(t, 15*time.Second, func() error {
		var err error
		scrape, err = httpGet("http://" + listen + "/metrics")
		return err
	})
	// The exporter connects for each scrape; this test holds one
	// connection of its own.
	want := map[string]float64{
		`redis_up`: 1,
		`redis_exporter_last_scrape_error{err=""}`: 0,
		`redis_commands_total{cmd="zadd"}`:         4,
		`redis_commands_total{cmd="zscore"}`:       5,
		`redis_connected_clients`:                  2,
		`redis_db_keys{db="db0"}`:                  3,
		`redis_db_keys{db="db2"}`:                  1,
		`redis_keyspace_hits_total`:                5,
	}
	for series, w := range want {
		got, err := sample(scrape, series)
		if err != nil {
			t.Errorf("%v", err)
		} else if got != w {
			t.Errorf("%s = %v, want %v", series, got, w)
		}
	}
	if errs := regexp.MustCompile(`(?m)^redis_exporter_last_scrape_error\{err="[^"]+"\}`).FindString(scrape); errs != "" {
		t.Errorf("scrape error: %s", errs)
	}
	// Latency from commandstats' usec: writes wait for their fsync.
	if d, err := sample(scrape, `redis_commands_duration_seconds_total{cmd="zadd"}`); err != nil || d <= 0 {
		t.Errorf("redis_commands_duration_seconds_total for zadd: %v %v", d, err)
	}
}

// metricsURL returns the URL goblind says it serves metrics on (its log
// at info level names it: --metrics-addr may give port 0).
func metricsURL(t *testing.T, g *Goblind) string {
	t.Helper()
	re := regexp.MustCompile(`serving metrics: url=(\S+)`)
	var u string
	testutil.Eventually(t, 10*time.Second, func() error {
		m := re.FindStringSubmatch(g.Log())
		if m == nil {
			return fmt.Errorf("goblind at %s has not logged its metrics URL", g.Addr)
		}
		u = m[1]
		return nil
	})
	return u
}

// TestPrometheusScrapesCluster has a real Prometheus server (Debian's
// prometheus) scrape the /metrics of a 3-node cluster, and reads every
// node's Raft commit index back with PromQL.
func TestPrometheusScrapesCluster(t *testing.T) {
	prom := requireTool(t, "prometheus", "prometheus")
	nodes := StartCluster(t, testutil.Rand(t, 3), ClusterOptions{Size: 3, Args: []string{"--metrics-addr", "127.0.0.1:0"}})
	leader := WaitLeader(t, nodes, 30*time.Second)
	ctx := context.Background()
	lc := leader.Client(patient)
	for i := range 20 {
		if err := lc.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: strconv.Itoa(i)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A write through a follower is forwarded: counted on both sides.
	follower := Followers(nodes, leader)[0]
	if err := follower.Client(patient).ZAdd(ctx, "z", redis.Z{Score: 100, Member: "f"}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n      *ClusterNode
		series string
	}{{follower, `goblin_raft_forwarded_writes_total{direction="sent"}`}, {leader, `goblin_raft_forwarded_writes_total{direction="received"}`}} {
		body, err := httpGet(metricsURL(t, c.n.Goblind))
		if err != nil {
			t.Fatal(err)
		}
		if v, err := sample(body, c.series); err != nil || v < 1 {
			t.Errorf("node %s: %s = %v (%v)", c.n.ID, c.series, v, err)
		}
		if c.n == follower {
			// A follower hears from its leader every few milliseconds.
			state, err1 := sample(body, `goblin_raft_state{state="Follower"}`)
			contact, err2 := sample(body, "goblin_raft_last_contact_seconds")
			if err1 != nil || err2 != nil || state != 1 || contact < 0 || contact > 5 {
				t.Errorf("follower %s: state %v, last contact %v s (%v, %v)", c.n.ID, state, contact, err1, err2)
			}
		}
	}
	info, err := Info(ctx, lc, "replication")
	if err != nil {
		t.Fatal(err)
	}
	commit, _ := strconv.ParseFloat(info["goblin_commit_index"], 64)

	var targets []string
	instance := map[string]string{} // host:port scraped → node ID
	for _, n := range nodes {
		u, err := url.Parse(metricsURL(t, n.Goblind))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, fmt.Sprintf("%q", u.Host))
		instance[u.Host] = n.ID
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	conf := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: goblin\n    static_configs:\n      - targets: [" +
		strings.Join(targets, ", ") + "]\n"
	if err := os.WriteFile(config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := testutil.FreeAddr(t, "")
	startTool(t, prom, "--config.file", config, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", listen)

	type result struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	testutil.Eventually(t, 60*time.Second, func() error {
		body, err := httpGet("http://" + listen + "/api/v1/query?query=" + url.QueryEscape(`goblin_raft_commit_index{job="goblin"}`))
		if err != nil {
			return err
		}
		var r result
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			return fmt.Errorf("%v: %s", err, body)
		}
		seen := map[string]bool{}
		for _, s := range r.Data.Result {
			id, ok := instance[s.Metric["instance"]]
			if !ok {
				return fmt.Errorf("a series of an unknown instance: %v", s.Metric)
			}
			v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
			if v < commit {
				return fmt.Errorf("node %s: commit index %v, below the leader's %v after the writes", id, v, commit)
			}
			seen[id] = true
		}
		if len(seen) != len(nodes) {
			return fmt.Errorf("commit index of %d nodes, want %d: %s", len(seen), len(nodes), body)
		}
		return nil
	})
	// The leader's per-follower figures and the command metrics are
	// there too.
	for query, want := range map[string]string{
		`count(goblin_raft_follower_lag_entries)`:      `"2"`, // the leader's, one a follower
		`count(goblin_commands_total{command="zadd"})`: `"2"`, // the leader and the follower written to
		`sum(goblin_raft_state{state="Leader"})`:       `"1"`,
		`sum(goblin_gossip_members{state="alive"})`:    `"9"`, // each node sees three
	} {
		body, err := httpGet("http://" + listen + "/api/v1/query?query=" + url.QueryEscape(query))
		if err != nil || !strings.Contains(body, `"status":"success"`) || !strings.Contains(body, ","+want+"]") {
			t.Errorf("%s: want %s: %v %s", query, want, err, body)
		}
	}
}

// TestMetricsAddrOffLoopback: plain HTTP off loopback is refused unless
// asked for explicitly.
func TestMetricsAddrOffLoopback(t *testing.T) {
	port := portOf(t, testutil.FreeAddr(t, ""))
	g := StartGoblind(t, NodeOptions{NoWait: true, Args: []string{"--metrics-addr", "0.0.0.0:" + strconv.Itoa(port)}})
	testutil.Eventually(t, 10*time.Second, func() error {
		if g.Running() {
			return fmt.Errorf("still running")
		}
		return nil
	})
	if g.ExitCode() == 0 || !strings.Contains(g.Log(), "is not a loopback address") {
		t.Fatalf("exit %d, log:\n%s", g.ExitCode(), g.Log())
	}
	g = StartGoblind(t, NodeOptions{Args: []string{"--metrics-addr", "0.0.0.0:" + strconv.Itoa(port), "--metrics-allow-remote", "--log-level", "info"}})
	body, err := httpGet(strings.Replace(metricsURL(t, g), "0.0.0.0", "127.0.0.1", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sample(body, `goblin_raft_state{state="Leader"}`); err != nil {
		t.Fatal(err)
	}
}

// TestLogFormatJSON: --log-format json writes one JSON object a line,
// with the fields the text format writes.
func TestLogFormatJSON(t *testing.T) {
	text := StartGoblind(t, NodeOptions{Args: []string{"--log-level", "info"}})
	js := StartGoblind(t, NodeOptions{Args: []string{"--log-level", "info", "--log-format", "json"}})
	text.Stop()
	js.Stop()

	// The text line: "... [INFO]  goblind: ready to accept connections: k=v k=v".
	var textKeys []string
	for _, line := range strings.Split(text.Log(), "\n") {
		_, kvs, ok := strings.Cut(line, "ready to accept connections: ")
		if !ok {
			continue
		}
		for _, kv := range regexp.MustCompile(`([\w-]+)=("(?:[^"\\]|\\.)*"|\S*)`).FindAllStringSubmatch(kvs, -1) {
			textKeys = append(textKeys, kv[1])
		}
	}
	if len(textKeys) == 0 {
		t.Fatalf("no ready line in the text log:\n%s", text.Log())
	}

	var ready map[string]any
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(js.Log()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		lines++
		for _, k := range []string{"@level", "@message", "@timestamp", "@module"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line without %s: %q", k, line)
			}
		}
		if m["@message"] == "ready to accept connections" {
			ready = m
		}
	}
	if ready == nil {
		t.Fatalf("no ready line among %d JSON lines:\n%s", lines, js.Log())
	}
	for _, k := range textKeys {
		if _, ok := ready[k]; !ok {
			t.Errorf("the JSON ready line lacks %q (the text one has it): %v", k, ready)
		}
	}
	if ready["addr"] != js.Addr || ready["@level"] != "info" || ready["@module"] != "goblind" {
		t.Errorf("JSON ready line: %v, want addr %s at info from goblind", ready, js.Addr)
	}
}

// TestMetricsOverTLS: with client TLS configured the endpoint is HTTPS
// with the client port's certificate and client-certificate check, on
// any address, without --metrics-allow-remote.
func TestMetricsOverTLS(t *testing.T) {
	p := newPKI(t)
	port := portOf(t, testutil.FreeAddr(t, ""))
	n := startTLSNode(t, p, "--metrics-addr", "0.0.0.0:"+strconv.Itoa(port), "--log-level", "info")
	u := metricsURL(t, n.Goblind)
	if !strings.HasPrefix(u, "https://") {
		t.Fatalf("metrics URL %s", u)
	}
	u = strings.Replace(u, "0.0.0.0", "localhost", 1)
	get := func(cfg *tls.Config) (string, error) {
		c := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		r, err := c.Get(u)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}
	body, err := get(p.clientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sample(body, `goblin_raft_state{state="Leader"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := get(p.clientConfig(t, true)); err == nil {
		t.Error("a client without a certificate was served")
	}
	if _, err := httpGet(strings.Replace(u, "https://", "http://", 1)); err == nil {
		t.Error("plain HTTP was served")
	}
}

// TestMetricsSnapshots: snapshots written are timed and sized.
func TestMetricsSnapshots(t *testing.T) {
	g := StartGoblind(t, NodeOptions{Args: []string{"--metrics-addr", "127.0.0.1:0", "--log-level", "info",
		"--snapshot-threshold", "16", "--snapshot-interval", "100ms"}})
	u := metricsURL(t, g)
	c := g.Client()
	ctx := context.Background()
	for i := range 64 {
		if err := c.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: strconv.Itoa(i)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		body, err := httpGet(u)
		if err != nil {
			return err
		}
		n, err := sample(body, "goblin_raft_snapshot_duration_seconds_count")
		if err != nil || n < 1 {
			return fmt.Errorf("%v snapshots timed (%v)", n, err)
		}
		if size, err := sample(body, "goblin_raft_snapshot_size_bytes"); err != nil || size < 64 {
			return fmt.Errorf("snapshot size %v (%v)", size, err)
		}
		return nil
	})
}
