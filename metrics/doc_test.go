package metrics

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

const docPath = "../docs/observability.md"

// docBlock returns the first fenced block of lang after heading in the
// observability manual.
func docBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q", docPath, heading)
	}
	_, rest, ok = strings.Cut(rest, "```"+lang+"\n")
	if !ok {
		t.Fatalf("no %s block under %q", lang, heading)
	}
	block, _, _ := strings.Cut(rest, "\n```")
	return block
}

// exposedNames returns the name of every metric the collector describes.
func exposedNames() map[string]bool {
	ch := make(chan *prometheus.Desc, 100)
	go func() {
		NewCollector(nil, nil, "").describeAll(ch)
		close(ch)
	}()
	names := map[string]bool{}
	re := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range ch {
		names[re.FindStringSubmatch(d.String())[1]] = true
	}
	return names
}

var metricName = regexp.MustCompile(`goblin_[a-z_]+`)

// checkNames fails for each goblin_ metric in text the collector does not
// expose (histogram series named by their _bucket, _sum or _count).
func checkNames(t *testing.T, what, text string, exposed map[string]bool) {
	t.Helper()
	for _, n := range metricName.FindAllString(text, -1) {
		base := n
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, suffix); ok && exposed[b] {
				base = b
			}
		}
		if !exposed[base] {
			t.Errorf("%s uses %s, which is not exposed", what, n)
		}
	}
}

// TestDocListsEveryMetric: the manual's tables name every metric, and
// nothing else.
func TestDocListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	exposed := exposedNames()
	listed := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `goblin_") {
			cell, _, _ := strings.Cut(line[2:], " |")
			for _, n := range metricName.FindAllString(cell, -1) {
				listed[n] = true
			}
		}
	}
	for n := range exposed {
		if !listed[n] {
			t.Errorf("%s is exposed but not listed in %s", n, docPath)
		}
	}
	for n := range listed {
		if !exposed[n] {
			t.Errorf("%s is listed in %s but not exposed", n, docPath)
		}
	}
}

// TestDocDashboard: the Grafana dashboard is JSON and queries metrics that
// exist.
func TestDocDashboard(t *testing.T) {
	block := docBlock(t, "## Grafana dashboard", "json")
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(block), &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if len(dash.Panels) < 10 {
		t.Fatalf("%d panels", len(dash.Panels))
	}
	exposed := exposedNames()
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, q := range p.Targets {
			checkNames(t, "panel "+p.Title, q.Expr, exposed)
		}
	}
}

// TestDocAlertRules: the alerting rules are valid for Prometheus's own
// checker (promtool, from Debian's prometheus) and use metrics that exist.
func TestDocAlertRules(t *testing.T) {
	block := docBlock(t, "## Alerts", "yaml")
	checkNames(t, "the alerting rules", block, exposedNames())
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") == "1" {
			t.Fatal("promtool not found and GOBLIN_REQUIRE_REDIS=1")
		}
		t.Skip("promtool not installed (apt-get install -y prometheus)")
	}
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
