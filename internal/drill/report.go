package drill

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Report is a drill's result, written as report.json.
type Report struct {
	Pass        bool         `json:"pass"`
	Verdict     string       `json:"verdict"` // what failed, or "pass"
	Seed        uint64       `json:"seed"`
	Started     string       `json:"started"`
	Seconds     float64      `json:"seconds"`
	Interrupted bool         `json:"interrupted,omitempty"`
	Nodes       []NodeReport `json:"nodes"`
	Config      ConfigReport `json:"config"`

	Ops             Counts            `json:"ops"`
	ByKind          map[string]Counts `json:"ops_by_kind"`
	Witness         Witness           `json:"witness"`
	Linearizability Linearizability   `json:"linearizability"`
	// Divergent: nodes whose final state of a key differs from the others'.
	Divergent []string `json:"divergent,omitempty"`
	// FinalReadErrors: nodes the final reads could not reach.
	FinalReadErrors map[string]string `json:"final_read_errors,omitempty"`

	Faults  []*Fault                `json:"faults"`
	Summary map[string]*KindSummary `json:"summary"`
	Skipped map[string]string       `json:"skipped,omitempty"`
	// Terms: the lowest and highest Raft term the monitor saw (their
	// difference counts elections, spurious ones included).
	Terms [2]uint64 `json:"terms"`

	Files map[string]string `json:"files"`
	Out   string            `json:"-"`
}

// NodeReport names a node of the drill.
type NodeReport struct {
	ID      string `json:"id"`
	Addr    string `json:"addr"`
	PID     int    `json:"pid,omitempty"`
	Service string `json:"service,omitempty"`
}

// ConfigReport is the part of the configuration that repeats a run.
type ConfigReport struct {
	Clients    int      `json:"clients"`
	Rate       float64  `json:"rate"`
	Keys       int      `json:"keys"`
	Members    int      `json:"members"`
	Faults     []string `json:"faults"`
	Random     bool     `json:"random"`
	FaultEvery string   `json:"fault_every"`
	FaultFor   string   `json:"fault_for"`
	Target     string   `json:"target"`
	Compose    string   `json:"compose_project,omitempty"`
}

// Counts are operations by outcome.
type Counts struct {
	Total   int `json:"total"`
	OK      int `json:"ok"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
}

func (c *Counts) add(o Outcome) {
	c.Total++
	switch o {
	case OK:
		c.OK++
	case Failed:
		c.Failed++
	default:
		c.Unknown++
	}
}

// analyse checks the history once the workload has stopped.
func (d *Drill) analyse(end int64, interrupted bool) *Report {
	ctx, cancel := analyseContext()
	defer cancel()
	rep := &Report{
		Seed: d.cfg.Seed, Started: d.start.Format(time.RFC3339), Seconds: float64(end) / 1e9,
		Interrupted: interrupted, ByKind: map[string]Counts{}, Skipped: d.skipped, Out: d.cfg.Out,
		Files: map[string]string{},
		Config: ConfigReport{Clients: d.cfg.Clients, Rate: d.cfg.Rate, Keys: d.cfg.Keys, Members: d.cfg.Members,
			Faults: d.cfg.Faults, Random: d.cfg.Random, FaultEvery: d.cfg.FaultEvery.String(),
			FaultFor: d.cfg.FaultFor.String(), Target: d.cfg.Target, Compose: d.cfg.ComposeProject},
	}
	for _, n := range d.nodes {
		rep.Nodes = append(rep.Nodes, NodeReport{ID: n.ID, Addr: n.Addr, PID: n.PID(), Service: n.service})
	}
	if _, err := d.waitHealthy(ctx, d.cfg.HealthyWait); err != nil {
		d.progress("after the run: %v", err)
	}
	ops := d.hist.all()
	for _, op := range ops {
		rep.Ops.add(op.Outcome)
		c := rep.ByKind[op.Kind.String()]
		c.add(op.Outcome)
		rep.ByKind[op.Kind.String()] = c
	}
	d.progress("reading the witness set back on every node")
	rep.Witness = d.checkWitness(ops)
	final, errs := d.finalReads()
	if len(errs) > 0 {
		rep.FinalReadErrors = errs
	}
	rep.Divergent = divergent(final)
	d.progress("checking linearizability of %d operations", len(ops)+len(final))
	d.mu.Lock()
	faults := append([]*Fault(nil), d.faults...)
	d.mu.Unlock()
	rep.Linearizability = d.checkLinearizable(append(ops, final...), faults)
	availability(ops, faults)
	rep.Faults = faults
	rep.Summary = summarise(faults)
	lo, hi := d.mon.terms()
	rep.Terms = [2]uint64{lo, hi}

	var bad []string
	if rep.Witness.LostCount > 0 {
		bad = append(bad, fmt.Sprintf("%d acknowledged writes lost", rep.Witness.LostCount))
	}
	if rep.Witness.PhantomCount > 0 {
		bad = append(bad, fmt.Sprintf("%d writes reported failed took effect", rep.Witness.PhantomCount))
	}
	if rep.Witness.Torn > 0 {
		bad = append(bad, fmt.Sprintf("%d large writes half applied", rep.Witness.Torn))
	}
	switch rep.Linearizability.Result {
	case "illegal":
		bad = append(bad, "not linearizable")
	case "unknown":
		bad = append(bad, "linearizability check timed out")
	}
	if len(rep.Divergent) > 0 {
		bad = append(bad, "replicas diverge")
	}
	if len(rep.Witness.Unread) > 0 || len(rep.FinalReadErrors) > 0 {
		bad = append(bad, "final state unreadable on some nodes")
	}
	rep.Pass = len(bad) == 0
	rep.Verdict = "pass"
	if !rep.Pass {
		rep.Verdict = strings.Join(bad, "; ")
	}
	return rep
}

// divergent names the keys whose final reads differ between nodes.
func divergent(final []Op) []string {
	by := map[int]map[string]string{}
	for _, op := range final {
		if by[op.Key] == nil {
			by[op.Key] = map[string]string{}
		}
		by[op.Key][op.Node] = describeRange(op.Range)
	}
	var out []string
	for k, states := range by {
		seen := map[string]bool{}
		for _, s := range states {
			seen[s] = true
		}
		if len(seen) > 1 {
			out = append(out, fmt.Sprintf("k%d: %v", k, states))
		}
	}
	sort.Strings(out)
	return out
}

// Failed reports whether the run found lost or phantom writes, a
// linearizability violation or diverging replicas (exit status 1); an
// inconclusive run is not Failed but not Pass either (exit status 3).
func (r *Report) Failed() bool {
	return r.Witness.LostCount > 0 || r.Witness.PhantomCount > 0 || r.Witness.Torn > 0 || r.Linearizability.Result == "illegal" || len(r.Divergent) > 0
}

// write saves report.json, history.jsonl and timeline.svg.
func (r *Report) write(d *Drill) error {
	r.Files["report"] = filepath.Join(d.cfg.Out, "report.json")
	r.Files["history"] = filepath.Join(d.cfg.Out, "history.jsonl")
	r.Files["timeline"] = filepath.Join(d.cfg.Out, "timeline.svg")
	if r.Linearizability.HTML != "" {
		r.Files["linearizability"] = r.Linearizability.HTML
	}
	if err := writeHistory(r.Files["history"], d.hist.all()); err != nil {
		return err
	}
	if err := os.WriteFile(r.Files["timeline"], timelineSVG(d, r), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(r.Files["report"], append(raw, '\n'), 0o644)
}

func writeHistory(path string, ops []Op) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Line is the one-line verdict.
func (r *Report) Line() string {
	var b strings.Builder
	verdict := "PASS"
	switch {
	case r.Failed():
		verdict = "FAIL"
	case !r.Pass:
		verdict = "INCONCLUSIVE"
	}
	if r.Interrupted {
		verdict += " (interrupted)"
	}
	fmt.Fprintf(&b, "goblin drill: %s: %d nodes, %.0fs, %d ops (%d ok, %d failed, %d unknown), %d faults; ",
		verdict, len(r.Nodes), r.Seconds, r.Ops.Total, r.Ops.OK, r.Ops.Failed, r.Ops.Unknown, len(r.Faults))
	lin := map[string]string{"ok": "linearizable", "illegal": "NOT linearizable", "unknown": "linearizability unknown"}[r.Linearizability.Result]
	fmt.Fprintf(&b, "%d lost, %d phantom, %s", r.Witness.LostCount, r.Witness.PhantomCount, lin)
	if r.Witness.Large > 0 {
		fmt.Fprintf(&b, "; %d large writes, %d torn", r.Witness.Large, r.Witness.Torn)
	}
	var kinds []string
	for k := range r.Summary {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		s := r.Summary[k]
		if s.Count == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s×%d p50 %s p99 %s max %s", k, s.Count,
			secs(s.WriteUnavailable.P50), secs(s.WriteUnavailable.P99), secs(s.WriteUnavailable.Max)))
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "; writes unavailable: %s", strings.Join(parts, ", "))
	}
	if !r.Pass && !r.Failed() {
		fmt.Fprintf(&b, " (%s)", r.Verdict)
	}
	fmt.Fprintf(&b, "; report %s, picture %s", r.Files["report"], r.Files["timeline"])
	if h := r.Files["linearizability"]; h != "" {
		fmt.Fprintf(&b, ", violation %s", h)
	}
	return b.String()
}

func secs(msv float64) string { return fmt.Sprintf("%.2fs", msv/1000) }
