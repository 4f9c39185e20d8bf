package drill

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config is one drill.
type Config struct {
	// Nodes are RESP addresses of some or all nodes; the others are found
	// through GOBLIN NODES.
	Nodes          []string
	User, Password string
	TLS            *tls.Config // nil: plain TCP
	// ComposeProject: the nodes are the services of this docker-compose
	// project (faults go through docker) instead of local processes.
	ComposeProject string

	Clients   int           // concurrent clients
	Rate      float64       // operations per second, all clients together (0: as fast as they go)
	Duration  time.Duration // length of the run (with Cycles 0)
	Cycles    int           // if > 0: run this many fault cycles, whatever Duration says
	Seed      uint64
	Keys      int // workload keys
	Members   int // members per key (at most 8)
	OpTimeout time.Duration
	// LargeBytes: one witness write in LargeEvery also adds a pad member
	// of this many bytes, so that its log entry passes a cluster's 1 MiB
	// and is written in pieces; 0: no such writes.
	LargeBytes, LargeEvery int

	Faults      []string      // kinds, see AllFaults
	Random      bool          // draw each fault at random (else in turn)
	FaultEvery  time.Duration // from one fault's start to the next's
	FaultFor    time.Duration // how long a fault lasts before it is healed
	Warmup      time.Duration // workload before the first fault
	Target      string        // kill and pause hit: leader (default), follower or random
	CheckTime   time.Duration // bound on the linearizability check
	Out         string        // directory for the report, picture and logs
	KeepKeys    bool          // leave the workload's keys in place
	Progress    io.Writer     // progress lines (nil: none)
	HealthyWait time.Duration // how long to wait for a healthy cluster between faults
}

// Defaults fills the zero fields of c.
func (c *Config) Defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Keys == 0 {
		c.Keys = 4
	}
	if c.Members == 0 {
		c.Members = 3
	}
	if c.LargeEvery == 0 {
		c.LargeEvery = 8
	}
	set(&c.Duration, 60*time.Second)
	set(&c.OpTimeout, 15*time.Second)
	set(&c.FaultEvery, 10*time.Second)
	set(&c.FaultFor, 4*time.Second)
	set(&c.Warmup, 3*time.Second)
	set(&c.CheckTime, 5*time.Minute)
	set(&c.HealthyWait, 60*time.Second)
	if c.Target == "" {
		c.Target = "leader"
	}
	if len(c.Faults) == 0 {
		c.Faults = []string{FaultKill, FaultPause, FaultPartitionLeader, FaultPartitionMinority, FaultBridge}
	}
	if c.Out == "" {
		c.Out = "drill-" + time.Now().Format("20060102-150405")
	}
}

// check validates c after Defaults.
func (c *Config) check() error {
	if len(c.Nodes) == 0 {
		return errors.New("no node addresses (--nodes)")
	}
	if c.Members < 1 || c.Members > maxMembers {
		return fmt.Errorf("--members must be 1 to %d", maxMembers)
	}
	if c.Keys < 1 || c.Clients < 1 {
		return errors.New("--keys and --clients must be at least 1")
	}
	if c.FaultFor >= c.FaultEvery {
		return fmt.Errorf("--fault-for (%v) must be shorter than --fault-every (%v)", c.FaultFor, c.FaultEvery)
	}
	for _, f := range c.Faults {
		if !slices.Contains(AllFaults, f) {
			return fmt.Errorf("unknown fault %q (faults: %s)", f, strings.Join(AllFaults, ","))
		}
	}
	switch c.Target {
	case "leader", "follower", "random":
	default:
		return fmt.Errorf("--target must be leader, follower or random, not %q", c.Target)
	}
	return nil
}

// Drill is one run.
type Drill struct {
	cfg      Config
	dialOpts dialOptions
	nodes    []*node
	back     backend
	rng      *rand.Rand
	prefix   string
	start    time.Time
	hist     history
	mon      monitor

	mu      sync.Mutex
	faults  []*Fault
	skipped map[string]string
	healing func(context.Context) error // the fault in progress's heal
}

// progress prints one progress line.
func (d *Drill) progress(format string, args ...any) {
	if d.cfg.Progress == nil {
		return
	}
	t := time.Since(d.start).Seconds()
	if d.start.IsZero() {
		t = 0
	}
	fmt.Fprintf(d.cfg.Progress, "%7.1fs  %s\n", t, fmt.Sprintf(format, args...))
}

// Run runs a drill: it discovers the cluster, runs the workload while
// injecting faults, then checks the history and writes the report. When
// ctx is cancelled (an interrupt) it heals the fault in progress, stops,
// and reports on what it has. The error is for a drill that could not
// run; a run's verdict is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.Defaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	d := &Drill{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6b1)), skipped: map[string]string{}}
	d.dialOpts = dialOptions{user: cfg.User, password: cfg.Password, tls: cfg.TLS, timeout: time.Second}
	d.prefix = fmt.Sprintf("drill:%x:", rand.Uint32())

	// A cluster that is still starting (docker-compose up -d a moment
	// ago) is given HealthyWait to answer.
	var err error
	for deadline := time.Now().Add(cfg.HealthyWait); ; {
		if d.nodes, err = discover(cfg.Nodes, d.dialOpts); err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		time.Sleep(500 * time.Millisecond)
	}
	needNet := false
	for _, f := range cfg.Faults {
		needNet = needNet || f == FaultPartitionLeader || f == FaultPartitionMinority || f == FaultBridge
	}
	if cfg.ComposeProject != "" {
		d.back, err = newComposeBackend(d)
	} else {
		d.back, err = newLocalBackend(d, needNet)
	}
	if err != nil {
		return nil, err
	}
	defer d.back.close()
	var kinds []string
	for _, f := range cfg.Faults {
		if err := d.back.supports(f); err != nil {
			d.skipped[f] = err.Error()
			continue
		}
		kinds = append(kinds, f)
	}
	for f, why := range d.skipped {
		fmt.Fprintf(progressOr(cfg.Progress), "skipping %s: %s\n", f, why)
	}
	if _, err := d.waitHealthy(ctx, cfg.HealthyWait); err != nil {
		return nil, fmt.Errorf("before the drill: %w", err)
	}

	d.start = time.Now()
	d.progress("drill of %d nodes (%s), seed %d, faults %s, output in %s", len(d.nodes), strings.Join(ids(d.nodes), " "), cfg.Seed, strings.Join(kinds, ","), cfg.Out)
	// The clients' seeds are drawn here, before the faults draw theirs
	// from the same generator, so a seed repeats both.
	seeds := make([]uint64, cfg.Clients)
	for i := range seeds {
		seeds[i] = d.rng.Uint64()
	}
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.runClients(wctx, seeds) }()
	go func() { defer wg.Done(); d.mon.run(wctx, d) }()

	interrupted := d.schedule(ctx, kinds)

	stopWork()
	wg.Wait()
	end := d.since()
	d.progress("workload stopped: %d operations", len(d.hist.all()))
	d.finishFaults(end)

	rep := d.analyse(end, interrupted)
	if err := rep.write(d); err != nil {
		return rep, err
	}
	if !cfg.KeepKeys {
		d.dropKeys()
	}
	return rep, nil
}

func progressOr(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// schedule injects faults until the run's end; it returns true when ctx
// was cancelled.
func (d *Drill) schedule(ctx context.Context, kinds []string) (interrupted bool) {
	wait := func(until int64) bool {
		dur := time.Duration(until - d.since())
		if dur <= 0 {
			return ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(dur):
			return true
		}
	}
	every, hold := d.cfg.FaultEvery.Nanoseconds(), d.cfg.FaultFor.Nanoseconds()
	total := d.cfg.Duration.Nanoseconds()
	if d.cfg.Cycles > 0 {
		total = d.cfg.Warmup.Nanoseconds() + int64(d.cfg.Cycles)*every
	}
	if !wait(d.cfg.Warmup.Nanoseconds()) {
		return true
	}
	for i := 0; len(kinds) > 0; i++ {
		at := d.since()
		if at+every > total+every/10 {
			break
		}
		kind := kinds[i%len(kinds)]
		if d.cfg.Random {
			kind = kinds[d.rng.IntN(len(kinds))]
		}
		f := &Fault{N: i + 1, Kind: kind}
		d.runFault(ctx, f, hold)
		if ctx.Err() != nil {
			return true
		}
		// The next fault waits for the cluster to be whole again, and at
		// least until its turn.
		if _, err := d.waitHealthy(ctx, d.cfg.HealthyWait); err != nil {
			d.progress("cluster not healthy after fault %d: %v", f.N, err)
			if ctx.Err() != nil {
				return true
			}
		}
		if !wait(at + every) {
			return true
		}
		if d.cfg.Cycles > 0 && i+1 >= d.cfg.Cycles {
			break
		}
	}
	if d.cfg.Cycles == 0 && !wait(total) {
		return true
	}
	return false
}

// runFault injects f, holds it, and heals it.
func (d *Drill) runFault(ctx context.Context, f *Fault, hold int64) {
	leader, err := d.waitLeader(ctx, 30*time.Second)
	f.Leader = leader
	f.start = d.since()
	d.mu.Lock()
	d.faults = append(d.faults, f)
	d.mu.Unlock()
	if err != nil {
		f.Error = "before injecting: " + err.Error()
		f.heal = f.start
		d.progress("fault %d %s not injected: %v", f.N, f.Kind, err)
		return
	}
	heal, err := d.inject(ctx, f)
	if err != nil {
		f.Error = err.Error()
		f.heal = d.since()
		d.progress("fault %d %s failed: %v", f.N, f.Kind, err)
		if heal == nil {
			d.back.heal()
		}
		return
	}
	what := f.Kind
	if len(f.Targets) > 0 {
		what += " " + strings.Join(f.Targets, ",")
	}
	d.progress("fault %d: %s (leader was %s)%s", f.N, what, leader, detail(f.Detail))
	if heal == nil {
		f.heal = f.start
		return
	}
	d.mu.Lock()
	d.healing = heal
	d.mu.Unlock()
	// The fault holds for its full time once in place (a partition's
	// rules take a moment to write).
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(hold)):
	}
	d.healNow(f)
}

func detail(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// healNow ends the fault in progress, if any. It runs even after an
// interrupt: a drill never leaves a node stopped or cut off.
func (d *Drill) healNow(f *Fault) {
	d.mu.Lock()
	heal := d.healing
	d.healing = nil
	d.mu.Unlock()
	if heal == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := heal(ctx)
	f.heal = d.since()
	if err != nil {
		f.Error = "healing: " + err.Error()
		d.progress("fault %d: healing failed: %v", f.N, err)
		return
	}
	d.progress("fault %d healed", f.N)
}

// finishFaults closes every fault's window at the next fault's start or
// the end of the run, and converts times for the report.
func (d *Drill) finishFaults(end int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, f := range d.faults {
		f.end = end
		if i+1 < len(d.faults) {
			f.end = d.faults[i+1].start
		}
		if f.heal == 0 {
			f.heal = end
		}
		f.StartMS, f.HealMS, f.EndMS = ms(f.start), ms(f.heal), ms(f.end)
	}
}

func ms(ns int64) float64 { return float64(ns/1e3) / 1e3 }

// dropKeys deletes the workload's keys.
func (d *Drill) dropKeys() {
	args := []string{"DEL", d.keyName(-1)}
	for i := 0; i < d.cfg.Keys; i++ {
		args = append(args, d.keyName(i))
	}
	for _, n := range d.nodes {
		if d.admin(n, args...) == nil {
			return
		}
	}
}
