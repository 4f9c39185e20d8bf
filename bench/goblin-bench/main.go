// Command goblin-bench runs deterministic workloads against any RESP
// endpoint (goblind, redis-server, …) and reports throughput, latency
// percentiles, memory, and a check of the final state.
//
//	goblin-bench replay  [flags]   the Wikimedia-like ZINCRBY replay
//	goblin-bench load    [flags]   concurrent pipelined workloads
//	goblin-bench memory  [flags]   used_memory, RSS and MEMORY USAGE of a key
//	goblin-bench report  [flags]   medians, ratios, a Markdown table and a PNG chart
//
// Each measurement is appended as one JSON line to --out; report reads
// those lines. bench/compare.sh drives a whole comparison.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/goblindb/goblin/resp/wire"
)

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch err := dispatch(os.Args[1:]); {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "goblin-bench:", err)
		os.Exit(1)
	}
}

// dispatch runs one subcommand.
func dispatch(args []string) error {
	switch args[0] {
	case "replay":
		return cmdReplay(args[1:])
	case "load":
		return cmdLoad(args[1:])
	case "memory":
		return cmdMemory(args[1:])
	case "report":
		return cmdReport(args[1:])
	case "-h", "-help", "--help", "help":
		usage(os.Stdout)
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "goblin-bench: unknown subcommand %q\n", args[0])
	usage(os.Stderr)
	os.Exit(2)
	return nil
}

// usage prints every subcommand with its flags.
func usage(w io.Writer) {
	fmt.Fprint(w, `usage: goblin-bench <subcommand> [flags]

goblin-bench runs deterministic workloads against any RESP endpoint
(goblind, redis-server, ...) and appends each measurement as a JSON line
to --out; report turns those lines into tables and a chart.

subcommands:
  replay   the Wikimedia-like ZINCRBY replay, one command at a time or pipelined
  load     concurrent pipelined workloads from many connections
  memory   used_memory, RSS and MEMORY USAGE of a key
  report   medians, ratios, a Markdown table and a PNG chart
`)
	flagOutput = w
	defer func() { flagOutput = os.Stderr }()
	for _, sub := range []string{"replay", "load", "memory", "report"} {
		fmt.Fprintln(w)
		dispatch([]string{sub, "-h"}) // prints its flags, answers flag.ErrHelp
	}
}

// flagOutput is where the subcommands' flag sets print their usage.
var flagOutput io.Writer = os.Stderr

// newFlagSet is a subcommand's flag set; its Parse answers flag.ErrHelp
// for -h after printing the flags.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(flagOutput)
	return fs
}

// common flags of the measuring subcommands.
type common struct {
	addr, engine, out string
	rep               int
	quiet             bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", "127.0.0.1:6379", "RESP endpoint: host:port or a Unix socket path")
	fs.StringVar(&c.engine, "engine", "", "label of the engine measured (recorded in the results)")
	fs.StringVar(&c.out, "out", "", "append the result as a JSON line to this file")
	fs.IntVar(&c.rep, "rep", 0, "repetition number (recorded in the results)")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
}

// record is one measurement, as a JSON line.
type record struct {
	Kind     string `json:"kind"` // "run" or "memory"
	Engine   string `json:"engine"`
	Workload string `json:"workload"`
	Rep      int    `json:"rep"`
	Time     string `json:"time"`

	Clients   int     `json:"clients,omitempty"`
	Pipeline  int     `json:"pipeline,omitempty"`
	Ops       int64   `json:"ops,omitempty"`
	Errors    int64   `json:"errors,omitempty"`
	Seconds   float64 `json:"seconds,omitempty"`
	OpsPerSec float64 `json:"ops_per_sec,omitempty"`
	P50us     float64 `json:"p50_us,omitempty"`
	P99us     float64 `json:"p99_us,omitempty"`
	P999us    float64 `json:"p999_us,omitempty"`
	MaxUs     float64 `json:"max_us,omitempty"`
	Sequence  string  `json:"sequence,omitempty"`
	State     *stats  `json:"state,omitempty"`
	Verified  string  `json:"verified,omitempty"` // "ok", "skipped" or the mismatch

	Key        string `json:"key,omitempty"`
	Members    int64  `json:"members,omitempty"`
	UsedMemory int64  `json:"used_memory,omitempty"`
	RSS        int64  `json:"rss,omitempty"`
	KeyBytes   int64  `json:"key_bytes,omitempty"`
}

func (c *common) emit(r record) error {
	r.Engine, r.Rep, r.Time = c.engine, c.rep, time.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if c.out == "" {
		return nil
	}
	f, err := os.OpenFile(c.out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fillRun(r *record, o runOpts, st *runStats) {
	r.Clients, r.Pipeline = o.clients, o.pipeline
	r.Ops, r.Errors, r.Seconds = st.ops, st.errs, st.elapsed.Seconds()
	r.OpsPerSec = float64(st.ops) / st.elapsed.Seconds()
	r.P50us, r.P99us, r.P999us = us(st.h.quantile(0.5)), us(st.h.quantile(0.99)), us(st.h.quantile(0.999))
	r.MaxUs = us(time.Duration(st.h.max))
}

func printRun(engine string, r record) {
	fmt.Printf("%-14s %-16s c=%-3d P=%-3d %9d ops %8.2fs %10.0f ops/s  p50 %7.1fµs  p99 %8.1fµs  p99.9 %8.1fµs  errors %d  %s\n",
		engine, r.Workload, r.Clients, r.Pipeline, r.Ops, r.Seconds, r.OpsPerSec, r.P50us, r.P99us, r.P999us, r.Errors, r.Verified)
}

func cmdReplay(args []string) error {
	fs := newFlagSet("replay")
	var c common
	c.register(fs)
	var spec wikiSpec
	fs.IntVar(&spec.N, "n", wikiN, "commands")
	fs.IntVar(&spec.Members, "members", 0, "distinct page IDs (default: 279,458 scaled by n/2,000,000)")
	fs.IntVar(&spec.Max, "max", 0, "busiest page's count (default: 11,792 scaled by n/2,000,000)")
	seed := fs.Uint64("seed", 1, "generator seed")
	key := fs.String("key", "wiki:pages", "sorted-set key (deleted first)")
	clients := fs.Int("clients", 1, "connections")
	pipeline := fs.Int("pipeline", 1, "commands in flight per connection (1: reply-per-command)")
	timeout := fs.Duration("timeout", time.Hour, "stop after this long even if not done")
	verify := fs.Bool("verify", true, "read the key back and check it against the generator")
	name := fs.String("workload", "", "workload label (default: replay-rpc or replay-pipelined)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	spec.Seed = *seed

	w := newWiki(spec)
	if *name == "" {
		*name = "replay-rpc"
		if *pipeline > 1 || *clients > 1 {
			*name = "replay-pipelined"
		}
	}
	pre, err := dial(c.addr)
	if err != nil {
		return err
	}
	_, err = pre.do("DEL", *key)
	pre.close()
	if err != nil {
		return err
	}
	o := runOpts{addr: c.addr, clients: *clients, pipeline: *pipeline, requests: int64(w.spec.N), duration: *timeout, seed: *seed, label: *name, quiet: c.quiet}
	st, err := run(context.Background(), o, func(wk *worker, i int64) bool {
		wk.buf = appendZincrby(wk.buf[:0], *key, w.ids[w.seq[i]])
		wk.c.raw(wk.buf)
		return true
	})
	if err != nil {
		return err
	}
	r := record{Kind: "run", Workload: *name, Key: *key, Sequence: w.sequenceDigest(int(st.ops))}
	fillRun(&r, o, st)
	r.Verified = "skipped"
	if *verify {
		got, err := readState(c.addr, *key)
		if err != nil {
			return err
		}
		r.State = &got
		want := w.expected(int(st.ops))
		if err := check(got, want, true); err != nil {
			r.Verified = "MISMATCH: " + err.Error()
		} else {
			r.Verified = "ok"
		}
	}
	printRun(c.engine, r)
	if r.State != nil {
		fmt.Printf("%-14s final state: %d members, score sum %.0f, max %.0f, digest %s (sequence %s)\n",
			c.engine, r.State.Members, r.State.Sum, r.State.Max, r.State.Digest, r.Sequence)
	}
	if st.firstErr != nil {
		fmt.Printf("%-14s first error: %v\n", c.engine, st.firstErr)
	}
	if err := c.emit(r); err != nil {
		return err
	}
	if strings.HasPrefix(r.Verified, "MISMATCH") {
		return fmt.Errorf("final state check failed: %s", r.Verified)
	}
	return nil
}

// appendZincrby appends `ZINCRBY key 1 id` in RESP.
func appendZincrby(b []byte, key string, id int32) []byte {
	b = wire.AppendBulkString(wire.AppendArrayLen(b, 4), "ZINCRBY")
	b = wire.AppendBulkString(b, key)
	b = wire.AppendBulkString(b, "1")
	return wire.AppendBulkInt(b, int64(id))
}

func cmdLoad(args []string) error {
	fs := newFlagSet("load")
	var c common
	c.register(fs)
	workload := fs.String("workload", "all", "zadd, zincrby, zscore, zrank, zrevrank, zrange, zrangebyscore, mixed, or all (comma-separated list allowed)")
	key := fs.String("key", "bench:load", "sorted-set key (replaced before each workload)")
	members := fs.Int64("members", 100_000, "members of the key")
	clients := fs.Int("clients", 50, "connections")
	pipeline := fs.Int("pipeline", 16, "commands in flight per connection")
	requests := fs.Int64("requests", 1_000_000, "commands per workload (at most)")
	duration := fs.Duration("duration", 10*time.Second, "time per workload (at most)")
	seed := fs.Uint64("seed", 1, "generator seed")
	readonly := fs.Bool("readonly", false, "send READONLY on every connection first (Goblin, Redis Cluster): a follower serves reads from its own state")
	primary := fs.String("primary", "", "fill the key and check the final state here, and measure on --addr once it holds every member (a replica or follower; default: --addr)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	var list []*loadWorkload
	if *workload == "all" {
		for i := range loadWorkloads {
			list = append(list, &loadWorkloads[i])
		}
	} else {
		for _, n := range strings.Split(*workload, ",") {
			l, err := findLoadWorkload(strings.TrimSpace(n))
			if err != nil {
				return err
			}
			list = append(list, l)
		}
	}
	failed := 0
	home := c.addr
	if *primary != "" {
		home = *primary
	}
	for _, l := range list {
		want, err := prepareLoad(home, *key, *members)
		if err != nil {
			return err
		}
		if home != c.addr {
			if err := awaitCard(c.addr, *key, *members, *readonly); err != nil {
				return err
			}
		}
		o := runOpts{addr: c.addr, clients: *clients, pipeline: *pipeline, requests: *requests, duration: *duration, seed: *seed, label: l.name, quiet: c.quiet, readonly: *readonly}
		st, err := run(context.Background(), o, l.gen(*key, *members))
		if err != nil {
			return err
		}
		r := record{Kind: "run", Workload: l.name, Key: *key}
		fillRun(&r, o, st)
		got, err := readState(home, *key)
		if err != nil {
			return err
		}
		r.State = &got
		exact := !l.write
		if l.incr {
			want.Sum += float64(st.writesOK)
		} else if l.write {
			want.Sum = got.Sum // random new scores: only the member count is known
		}
		if err := check(got, want, exact); err != nil {
			r.Verified = "MISMATCH: " + err.Error()
			failed++
		} else {
			r.Verified = "ok"
		}
		printRun(c.engine, r)
		if st.firstErr != nil {
			fmt.Printf("%-14s first error: %v\n", c.engine, st.firstErr)
		}
		if err := c.emit(r); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d workload(s) failed the final state check", failed)
	}
	return nil
}
