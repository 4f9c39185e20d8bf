package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// The reference engine names bench/compare.sh gives; the targets of issue
// 6 are ratios between them.
const (
	engRedis         = "redis"
	engRedisEverysec = "redis-aof-everysec"
	engRedisAlways   = "redis-aof-always"
	engGoblinEvery   = "goblin-everysec"
	engGoblinAlways  = "goblin-always"
)

// target is one ratio the project promises, measured in the same run.
type target struct {
	about     string
	workloads []string // the ratio is the geometric mean over these
	engine    string
	peer      string
	want      float64
	atMost    bool // memory: lower is better
	memory    bool
}

var targets = []target{
	{about: "reply-per-command replay, goblind --fsync everysec vs redis (no persistence)", workloads: []string{"replay-rpc"}, engine: engGoblinEvery, peer: engRedis, want: 1.0},
	{about: "reply-per-command replay, goblind --fsync everysec vs redis appendfsync everysec", workloads: []string{"replay-rpc"}, engine: engGoblinEvery, peer: engRedisEverysec, want: 1.0},
	{about: "pipelined writes, 50 connections, goblind --fsync everysec vs redis (no persistence)", workloads: []string{"zadd", "zincrby"}, engine: engGoblinEvery, peer: engRedis, want: 1.0},
	{about: "pipelined writes, 50 connections, goblind --fsync always vs redis appendfsync always", workloads: []string{"zadd", "zincrby"}, engine: engGoblinAlways, peer: engRedisAlways, want: 2.0},
	{about: "pipelined rank/score reads, goblind vs redis", workloads: []string{"zscore", "zrank", "zrevrank"}, engine: engGoblinEvery, peer: engRedis, want: 1.0},
	{about: "RSS after the replay (int32:float32 key) vs redis", engine: engGoblinEvery, peer: engRedis, want: 0.8, atMost: true, memory: true},
}

// summary holds the medians of one engine on one workload.
type summary struct {
	n                   int
	ops, p50, p99, p999 float64
	clients, pipeline   int
	verified            string
	members             int64
	used, rss, keyBytes float64
}

type report struct {
	engines, workloads []string
	runs               map[[2]string]*summary // (workload, engine)
	mem                map[string]*summary    // engine
}

func readRecords(paths []string) ([]record, error) {
	var out []record
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for line := 1; sc.Scan(); line++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var r record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", p, line, err)
			}
			out = append(out, r)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func buildReport(recs []record, engineOrder []string) *report {
	rp := &report{runs: map[[2]string]*summary{}, mem: map[string]*summary{}}
	type acc struct{ ops, p50, p99, p999, used, rss, key []float64 }
	runs := map[[2]string]*acc{}
	mems := map[string]*acc{}
	seenE := map[string]bool{}
	for _, r := range recs {
		if !seenE[r.Engine] {
			seenE[r.Engine] = true
			rp.engines = append(rp.engines, r.Engine)
		}
		switch r.Kind {
		case "run":
			k := [2]string{r.Workload, r.Engine}
			if runs[k] == nil {
				runs[k] = &acc{}
				rp.runs[k] = &summary{clients: r.Clients, pipeline: r.Pipeline, verified: "ok"}
				if !slices.Contains(rp.workloads, r.Workload) {
					rp.workloads = append(rp.workloads, r.Workload)
				}
			}
			a, s := runs[k], rp.runs[k]
			a.ops = append(a.ops, r.OpsPerSec)
			a.p50, a.p99, a.p999 = append(a.p50, r.P50us), append(a.p99, r.P99us), append(a.p999, r.P999us)
			if r.Verified != "ok" && r.Verified != "skipped" {
				s.verified = r.Verified
			}
			if r.Errors > 0 && s.verified == "ok" {
				s.verified = fmt.Sprintf("%d errors", r.Errors)
			}
		case "memory":
			if mems[r.Engine] == nil {
				mems[r.Engine] = &acc{}
				rp.mem[r.Engine] = &summary{}
			}
			a := mems[r.Engine]
			rp.mem[r.Engine].members = r.Members
			if r.Members > 0 {
				m := float64(r.Members)
				a.used, a.rss, a.key = append(a.used, float64(r.UsedMemory)/m), append(a.rss, float64(r.RSS)/m), append(a.key, float64(r.KeyBytes)/m)
			}
		}
	}
	for k, a := range runs {
		s := rp.runs[k]
		s.n, s.ops, s.p50, s.p99, s.p999 = len(a.ops), median(a.ops), median(a.p50), median(a.p99), median(a.p999)
	}
	for e, a := range mems {
		s := rp.mem[e]
		s.n, s.used, s.rss, s.keyBytes = len(a.used), median(a.used), median(a.rss), median(a.key)
	}
	if len(engineOrder) > 0 {
		var ordered []string
		for _, e := range engineOrder {
			if seenE[e] {
				ordered = append(ordered, e)
			}
		}
		for _, e := range rp.engines {
			if !slices.Contains(ordered, e) {
				ordered = append(ordered, e)
			}
		}
		rp.engines = ordered
	}
	return rp
}

// ratio returns engine/peer for a target, or false if either is missing.
func (rp *report) ratio(t target) (float64, bool) {
	if t.memory {
		a, b := rp.mem[t.engine], rp.mem[t.peer]
		if a == nil || b == nil || b.rss == 0 {
			return 0, false
		}
		return a.rss / b.rss, true
	}
	prod, n := 1.0, 0
	for _, w := range t.workloads {
		a, b := rp.runs[[2]string{w, t.engine}], rp.runs[[2]string{w, t.peer}]
		if a == nil || b == nil || b.ops == 0 {
			return 0, false
		}
		prod *= a.ops / b.ops
		n++
	}
	return pow(prod, 1/float64(n)), n > 0
}

func pow(x, y float64) float64 {
	if x <= 0 {
		return 0
	}
	return math.Exp(y * math.Log(x))
}

func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

func (rp *report) markdown(w io.Writer, recs []record) {
	fmt.Fprintf(w, "Throughput in commands per second, median of the repetitions (n = runs per cell); latency p50 / p99 / p99.9 in µs, medians.\n\n")
	fmt.Fprintf(w, "| workload | clients × pipeline |")
	for _, e := range rp.engines {
		fmt.Fprintf(w, " %s |", e)
	}
	fmt.Fprintf(w, "\n|---|---|")
	for range rp.engines {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	for _, wl := range rp.workloads {
		shape := ""
		for _, e := range rp.engines {
			if s := rp.runs[[2]string{wl, e}]; s != nil {
				shape = fmt.Sprintf("%d × %d", s.clients, s.pipeline)
				break
			}
		}
		fmt.Fprintf(w, "| %s | %s |", wl, shape)
		for _, e := range rp.engines {
			s := rp.runs[[2]string{wl, e}]
			if s == nil {
				fmt.Fprintf(w, " — |")
				continue
			}
			cell := fmt.Sprintf("**%s**<br>%.0f / %.0f / %.0f µs", thousands(s.ops), s.p50, s.p99, s.p999)
			if s.p50 < 100 {
				cell = fmt.Sprintf("**%s**<br>%.1f / %.0f / %.0f µs", thousands(s.ops), s.p50, s.p99, s.p999)
			}
			if s.verified != "ok" {
				cell += "<br>⚠ " + s.verified
			}
			fmt.Fprintf(w, " %s (n=%d) |", cell, s.n)
		}
		fmt.Fprintln(w)
	}
	if len(rp.mem) > 0 {
		fmt.Fprintf(w, "\nMemory after the full replay (the same final state on every engine), bytes per member (medians):\n\n")
		fmt.Fprintf(w, "| engine | members | RSS | used_memory | MEMORY USAGE of the key |\n|---|---|---|---|---|\n")
		for _, e := range rp.engines {
			if s := rp.mem[e]; s != nil {
				fmt.Fprintf(w, "| %s | %s | %.1f | %.1f | %.1f |\n", e, thousands(float64(s.members)), s.rss, s.used, s.keyBytes)
			}
		}
	}
	rp.states(w, recs)
	fmt.Fprintf(w, "\nTargets (ratios of medians measured in the same run):\n\n| target | ratio | goal | met |\n|---|---|---|---|\n")
	for _, t := range targets {
		r, ok := rp.ratio(t)
		goal := fmt.Sprintf("≥ %.1f×", t.want)
		if t.atMost {
			goal = fmt.Sprintf("≤ %.1f×", t.want)
		}
		if !ok {
			fmt.Fprintf(w, "| %s | not measured | %s | — |\n", t.about, goal)
			continue
		}
		met := r >= t.want
		if t.atMost {
			met = r <= t.want
		}
		mark := "no"
		if met {
			mark = "yes"
		}
		fmt.Fprintf(w, "| %s | %.2f× | %s | %s |\n", t.about, r, goal, mark)
	}
}

func cmdReport(args []string) error {
	fs := newFlagSet("report")
	md := fs.String("md", "", "write the Markdown tables here (default: stdout)")
	png := fs.String("png", "", "write the chart here")
	engines := fs.String("engines", strings.Join([]string{engRedis, engRedisEverysec, engRedisAlways, engGoblinEvery, engGoblinAlways, "goblin-3node"}, ","), "engine column order")
	title := fs.String("title", "Goblin vs redis-server", "chart title")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("report: name one or more results files")
	}
	recs, err := readRecords(fs.Args())
	if err != nil {
		return err
	}
	rp := buildReport(recs, strings.Split(*engines, ","))
	var out io.Writer = os.Stdout
	if *md != "" {
		f, err := os.Create(*md)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	rp.markdown(out, recs)
	if *png != "" {
		return rp.chart(*png, *title)
	}
	return nil
}

// states lists, per engine, the final state of every full replay (all
// repetitions): the same digest everywhere means the engines agree.
func (rp *report) states(w io.Writer, recs []record) {
	type key struct{ engine, state string }
	seen := map[key]int{}
	var order []key
	for _, r := range recs {
		if r.Kind != "run" || r.Workload != "replay-pipelined" || r.State == nil {
			continue
		}
		k := key{r.Engine, fmt.Sprintf("%s | %.0f | %.0f | `%s` | %s", thousands(float64(r.State.Members)), r.State.Sum, r.State.Max, r.State.Digest, r.Verified)}
		if seen[k] == 0 {
			order = append(order, k)
		}
		seen[k]++
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintf(w, "\nFinal state after the full replay (sequence `%s`), checked against the generator:\n\n", rp.sequence(recs))
	fmt.Fprintf(w, "| engine | members | score sum | max | digest | check | runs |\n|---|---|---|---|---|---|---|\n")
	for _, k := range order {
		fmt.Fprintf(w, "| %s | %s | %d |\n", k.engine, k.state, seen[k])
	}
}

func (rp *report) sequence(recs []record) string {
	for _, r := range recs {
		if r.Workload == "replay-pipelined" && r.Sequence != "" {
			return r.Sequence
		}
	}
	return "?"
}
