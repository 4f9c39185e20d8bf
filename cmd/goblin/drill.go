package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/goblindb/goblin/internal/drill"
)

// Exit statuses of goblin drill.
const (
	exitPass         = 0
	exitFail         = 1 // writes lost, phantom writes, not linearizable, replicas diverge
	exitUsage        = 2
	exitInconclusive = 3 // the drill could not run, or could not check everything
)

func cmdDrill(args []string) int {
	fs := flag.NewFlagSet("goblin drill", flag.ContinueOnError)
	var (
		cfg                       drill.Config
		nodes, faults             string
		composeFile               string
		tlsOn, tlsSkipVerify      bool
		caFile, certFile, keyFile string
		serverName                string
		seed                      uint64
		quiet                     bool
	)
	fs.StringVar(&nodes, "nodes", "", "RESP addresses of the cluster's nodes, host:port,... (one is enough: the others are found with GOBLIN NODES)")
	fs.StringVar(&cfg.User, "user", os.Getenv("GOBLIN_USER"), "ACL user to AUTH as (or GOBLIN_USER)")
	fs.StringVar(&cfg.Password, "requirepass", os.Getenv("GOBLIN_REQUIREPASS"), "password to AUTH with (or GOBLIN_REQUIREPASS)")
	fs.BoolVar(&tlsOn, "tls", false, "connect with TLS")
	fs.StringVar(&caFile, "tls-ca-cert-file", "", "CA certificates to verify the nodes with (TLS)")
	fs.StringVar(&certFile, "tls-cert-file", "", "client certificate (TLS)")
	fs.StringVar(&keyFile, "tls-key-file", "", "client private key (TLS)")
	fs.StringVar(&serverName, "tls-server-name", "", "name to verify the nodes' certificates against (TLS)")
	fs.BoolVar(&tlsSkipVerify, "tls-insecure", false, "do not verify the nodes' certificates (TLS)")
	fs.StringVar(&cfg.ComposeProject, "compose-project", "", "the nodes are this docker-compose project's services (faults through docker)")
	fs.StringVar(&composeFile, "compose-file", "", "docker-compose file of the project: its directory names the project unless --compose-project does; without --nodes, its published ports are the nodes")
	fs.IntVar(&cfg.Clients, "clients", 8, "concurrent clients")
	fs.Float64Var(&cfg.Rate, "rate", 200, "operations per second, all clients together (0: as fast as they go)")
	fs.DurationVar(&cfg.Duration, "duration", 60e9, "length of the run")
	fs.IntVar(&cfg.Cycles, "cycles", 0, "run this many fault cycles instead of --duration")
	fs.Uint64Var(&seed, "seed", 0, "seed of every random choice (0: a random seed, printed)")
	fs.IntVar(&cfg.Keys, "keys", 4, "workload keys")
	fs.IntVar(&cfg.Members, "members", 3, "members per key (1 to 8)")
	fs.IntVar(&cfg.LargeBytes, "large-bytes", 0, "one witness write in --large-every also adds a member of this many bytes (over 1048576: a cluster writes it in pieces; 0: none)")
	fs.IntVar(&cfg.LargeEvery, "large-every", 8, "how many witness writes, on average, per large one")
	fs.DurationVar(&cfg.OpTimeout, "op-timeout", 15e9, "a client gives up on a reply after this long (the outcome is then unknown)")
	fs.StringVar(&faults, "faults", "kill,pause,partition-leader,partition-minority,bridge", "faults to inject: "+strings.Join(drill.AllFaults, ","))
	fs.BoolVar(&cfg.Random, "random", false, "draw each fault at random (default: in the order given)")
	fs.DurationVar(&cfg.FaultEvery, "fault-every", 10e9, "time from one fault's start to the next's")
	fs.DurationVar(&cfg.FaultFor, "fault-for", 4e9, "how long a fault lasts before it is healed")
	fs.DurationVar(&cfg.Warmup, "warmup", 3e9, "workload before the first fault")
	fs.StringVar(&cfg.Target, "target", "leader", "node a kill or pause hits: leader, follower or random")
	fs.DurationVar(&cfg.CheckTime, "check-timeout", 5*60e9, "bound on the linearizability check")
	fs.StringVar(&cfg.Out, "out", "", "directory for report.json, history.jsonl, timeline.svg (default drill-DATE-TIME)")
	fs.BoolVar(&cfg.KeepKeys, "keep-keys", false, "leave the workload's keys in the cluster")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines, only the summary")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "goblin drill: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if composeFile != "" && cfg.ComposeProject == "" {
		cfg.ComposeProject = composeProjectName(composeFile)
	}
	if nodes != "" {
		cfg.Nodes = strings.Split(nodes, ",")
	} else if cfg.ComposeProject != "" {
		addrs, err := drill.ComposeNodes(cfg.ComposeProject)
		if err != nil {
			fmt.Fprintln(os.Stderr, "goblin drill:", err)
			return exitInconclusive
		}
		cfg.Nodes = addrs
	}
	for _, f := range strings.Split(faults, ",") {
		if f = strings.TrimSpace(f); f != "" {
			cfg.Faults = append(cfg.Faults, f)
		}
	}
	if seed == 0 {
		seed = rand.Uint64()
	}
	cfg.Seed = seed
	if tlsOn || caFile != "" || certFile != "" {
		tc, err := tlsConfig(caFile, certFile, keyFile, serverName, tlsSkipVerify)
		if err != nil {
			fmt.Fprintln(os.Stderr, "goblin drill:", err)
			return exitUsage
		}
		cfg.TLS = tc
	}
	if !quiet {
		cfg.Progress = os.Stderr
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "goblin drill: interrupted: healing the fault in progress, then reporting (interrupt again to quit at once)")
		cancel()
		<-sigs
		os.Exit(exitInconclusive)
	}()

	fmt.Fprintf(os.Stderr, "goblin drill: seed %d\n", seed)
	rep, err := drill.Run(ctx, cfg)
	if rep != nil {
		fmt.Println(rep.Line())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblin drill:", err)
		return exitInconclusive
	}
	switch {
	case rep.Failed():
		return exitFail
	case !rep.Pass || rep.Interrupted:
		return exitInconclusive
	}
	return exitPass
}

// composeProjectName is the project name docker-compose gives a file's
// directory: lower case, letters, digits, '-' and '_' only.
func composeProjectName(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	name := strings.ToLower(filepath.Base(filepath.Dir(abs)))
	return regexp.MustCompile(`[^a-z0-9_-]`).ReplaceAllString(name, "")
}

func tlsConfig(ca, cert, key, serverName string, insecure bool) (*tls.Config, error) {
	tc := &tls.Config{ServerName: serverName, InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", ca)
		}
		tc.RootCAs = pool
	}
	if cert != "" || key != "" {
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc, nil
}
