// Command goblind runs a Goblin node: a Redis-compatible sorted-set server
// whose writes go through a Raft log.
//
// With no flags it runs a single-node cluster on 127.0.0.1:6379 with its
// data in ./goblin-data. Every flag has a GOBLIN_* environment equivalent
// (--raft-addr is GOBLIN_RAFT_ADDR); a flag given on the command line wins.
//
//	goblind [flags]        run a node
//	goblind ping [--addr]  exit 0 if a node answers PING (for healthchecks)
//	goblind gencert ...    make a CA and certificates for TLS (gencert.go)
//	goblind backup ...     back up a running node, or verify a backup (backup.go)
//	goblind restore ...    seed a new node with a backup, or restore one into a cluster (restore.go)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/resp"
)

// version is what HELLO and INFO report; Goblin follows Redis 7.2.
const version = "7.2.0"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "backup" {
		os.Exit(backupCmd(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "restore" {
		os.Exit(restoreCmd(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "ping" {
		os.Exit(ping(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "gencert" {
		os.Exit(gencert(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "import" {
		os.Exit(importCmd(os.Args[2:]))
	}
	keepMonitorAwake()
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // the usage is written: asked for, not a failure
		}
		if !errors.As(err, new(reported)) {
			fmt.Fprintln(os.Stderr, "goblind:", err)
		}
		os.Exit(1)
	}
}

// rules collects repeated --packed PATTERN=LAYOUT flags.
type rules keyspace.Rules

func (r *rules) String() string {
	var parts []string
	for _, x := range *r {
		parts = append(parts, x.Pattern+"="+x.Layout.String())
	}
	return strings.Join(parts, " ")
}

func (r *rules) Set(v string) error {
	// The environment form holds several rules separated by spaces.
	for _, one := range strings.Fields(v) {
		i := strings.LastIndexByte(one, '=')
		if i <= 0 {
			return fmt.Errorf("want PATTERN=LAYOUT, got %q", one)
		}
		l, err := packed.ParseLayout(one[i+1:])
		if err != nil || l == packed.Standard {
			return fmt.Errorf("unknown packed layout %q (want int32|int64|uuid:float32|float64)", one[i+1:])
		}
		*r = append(*r, keyspace.Rule{Pattern: one[:i], Layout: l})
	}
	return nil
}

type options struct {
	addr, unixSocket, data, id, raftAddr, raftAdvertise string
	// idDefaulted: no --id was given; the ID is the Raft address.
	idDefaulted                      bool
	fsync, requirePass, doubleFormat string
	pprofAddr, cpuProfile, logStore  string
	packed                           rules
	snapshotThreshold                uint64
	snapshotInterval                 time.Duration
	procs, gcPercent                 int
	eventLoop                        string
	cluster                          clusterOptions
	plane                            planeOptions
	tls                              tlsOptions
	acl                              aclOptions
	limits                           limitOptions
	obs                              observabilityOptions
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("goblind", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:6379", "RESP listen address")
	fs.StringVar(&o.unixSocket, "unixsocket", "", "also listen on this Unix socket path")
	fs.StringVar(&o.data, "data", "./goblin-data", "data directory (Raft log, stable store, snapshots)")
	fs.StringVar(&o.id, "id", "", "node ID (default: the Raft address)")
	fs.StringVar(&o.raftAddr, "raft-addr", "", "Raft listen address (default: the RESP host, port+10000)")
	fs.StringVar(&o.raftAdvertise, "raft-advertise", "", "Raft address peers use (default: --raft-addr)")
	fs.StringVar(&o.fsync, "fsync", "always", "log durability: always (fsync every commit batch) or everysec")
	fs.StringVar(&o.logStore, "log-store", "auto", "Raft log store: wal (segment files), bolt (raft-boltdb), or auto (the data directory's, wal when new)")
	fs.StringVar(&o.requirePass, "requirepass", "", "password clients must AUTH with")
	fs.StringVar(&o.doubleFormat, "double-format", "7.2", "how replies write doubles: 7.2 (shortest) or 7.0 (%.17g, as Redis 7.0)")
	fs.Var(&o.packed, "packed", "PATTERN=LAYOUT: new keys matching PATTERN get a packed layout, e.g. 'wiki:*=int32:float32' (repeatable)")
	fs.Uint64Var(&o.snapshotThreshold, "snapshot-threshold", 8192, "log entries between snapshots")
	fs.DurationVar(&o.snapshotInterval, "snapshot-interval", 30*time.Second, "how often to check whether --snapshot-threshold entries have accumulated")
	fs.StringVar(&o.pprofAddr, "pprof", "", "serve net/http/pprof on this address (off by default; never expose it)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&o.eventLoop, "event-loop", "off", "on: serve plaintext clients from one event loop (epoll, Linux) while their requests run without waiting (plain reads and writes on a leader, linearizable reads on a follower), instead of from a goroutine each; off; auto: on when one thread runs Go code (--procs 1, or --procs 0 with two CPUs or fewer)")
	fs.IntVar(&o.procs, "procs", 0, "threads running Go code at once (GOMAXPROCS); 0: one where the process may use two CPUs or fewer, else every CPU")
	fs.IntVar(&o.gcPercent, "gogc", 0, fmt.Sprintf("heap growth between garbage collections, in percent (GOGC); 0: %d, or the GOGC environment variable when it is set", defaultGCPercent))
	o.cluster.register(fs)
	o.tls.register(fs)
	o.plane.register(fs)
	o.acl.register(fs)
	o.limits.register(fs)
	o.obs.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), goblindUsage)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout); err != nil {
		return nil, err
	}
	o.plane.readEnv()
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "GOBLIN_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v, ok, e := envValue(env, fs.Lookup(f.Name+"-file") != nil)
		if e == nil && ok {
			e = fs.Set(f.Name, v)
		}
		if e != nil {
			err = fmt.Errorf("%s: %w", env, e)
		}
	})
	if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.raftAddr == "" {
		if o.raftAddr, err = shiftPort(o.addr, 10000); err != nil {
			return nil, fmt.Errorf("the default --raft-addr: %w; set --raft-addr", err)
		}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	return o, nil
}

// check validates what depends on the flags alone, so that a command line
// goblind refuses is refused before anything is created: the data
// directory, Raft's state, a port.
func (o *options) check() error {
	if o.addr != "" {
		if _, _, err := net.SplitHostPort(o.addr); err != nil {
			return fmt.Errorf("--addr: %w", err)
		}
	}
	if o.procs < 0 {
		return fmt.Errorf("--procs must be ≥ 0")
	}
	switch o.eventLoop {
	case "auto", "on", "off":
	default:
		return fmt.Errorf("--event-loop must be auto, on or off, not %q", o.eventLoop)
	}
	// 0 is refused too: the node would take it as its default, which is
	// not what was asked.
	if o.snapshotInterval < minRaftTimeout {
		return fmt.Errorf("--snapshot-interval must be at least %s, not %s", minRaftTimeout, o.snapshotInterval)
	}
	if o.snapshotThreshold == 0 {
		return fmt.Errorf("--snapshot-threshold must be at least 1 entry, not 0")
	}
	if err := o.cluster.resolve(o); err != nil {
		return err
	}
	if err := o.cluster.check(); err != nil {
		return err
	}
	if err := o.tls.check(); err != nil {
		return err
	}
	if err := o.limits.check(); err != nil {
		return err
	}
	return o.obs.check(o.tls.port != 0)
}

// envValue returns the value of the environment variable env or, when it
// is not set, the contents of the file named by env_FILE (the Docker
// secrets convention: GOBLIN_REQUIREPASS_FILE=/run/secrets/pw), without
// its trailing newline. A flag that has a -file variant of its own takes
// no env_FILE (GOBLIN_CLUSTER_SECRET_FILE is --cluster-secret-file).
func envValue(env string, hasFileFlag bool) (string, bool, error) {
	if v, ok := os.LookupEnv(env); ok {
		return v, true, nil
	}
	path, ok := os.LookupEnv(env + "_FILE")
	if !ok || hasFileFlag {
		return "", false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	return strings.TrimRight(string(b), "\r\n"), true, nil
}

// shiftPort returns addr with its port increased by d.
func shiftPort(addr string, d int) (string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", fmt.Errorf("address %q has no port", addr)
	}
	var port int
	if _, err := fmt.Sscan(addr[i+1:], &port); err != nil {
		return "", fmt.Errorf("address %q: bad port", addr)
	}
	if port == 0 {
		return addr[:i] + ":0", nil
	}
	if port+d > 65535 {
		return "", fmt.Errorf("port %d of %q plus %d is past 65535", port, addr, d)
	}
	return fmt.Sprintf("%s:%d", addr[:i], port+d), nil
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	fsync, err := node.ParseFsync(o.fsync)
	if err != nil {
		return err
	}
	logStore, err := node.ParseLogStore(o.logStore)
	if err != nil {
		return err
	}
	if o.doubleFormat != "7.2" && o.doubleFormat != "7.0" {
		return fmt.Errorf("--double-format must be 7.2 or 7.0")
	}
	logger := o.obs.logger(os.Stderr)
	operatorACL, err := o.acl.operator(o.requirePass, logger)
	if err != nil {
		return err
	}
	// The files the flags name are read before the data directory is
	// created or locked: a refused start leaves nothing behind.
	ctls, err := loadClientTLS(o, logger)
	if err != nil {
		return err
	}
	defer ctls.Close()
	creds, err := o.plane.load(o.id, o.cluster.planeAddrs(o))
	if err != nil {
		return err
	}
	defer creds.watch(o.tls.watchInterval, logger)()

	dd, err := lockDataDir(o.data)
	if err != nil {
		return err
	}
	defer dd.unlock()
	// A start refused from here on (a taken port, a store that cannot be
	// opened) removes the data directory it created: nothing was served
	// from it, and a later start with other flags begins afresh.
	started := false
	defer func() {
		if !started {
			dd.discardNew()
		}
	}()
	tuned, err := tuneRuntime(o.procs, o.gcPercent)
	if err != nil {
		return err
	}
	stopProfiling, err := startProfiling(o.pprofAddr, o.cpuProfile)
	defer stopProfiling()
	if err != nil {
		return err
	}
	cl, err := newCluster(o, creds, logger)
	if err != nil {
		return err
	}
	// In cluster mode Raft and forwarding share the cluster's node-to-node
	// plane; a single node has no peer, and node runs its Raft on an
	// in-memory transport: no node-to-node port is open.
	var peers node.Peers
	var transport raft.Transport
	if cl != nil {
		peers, transport = cl, cl.RaftTransport()
	}
	n, err := node.New(node.Config{
		ID:                o.id,
		AdoptID:           o.idDefaulted,
		DataDir:           o.data,
		RaftAddr:          o.raftAddr,
		RaftAdvertise:     o.raftAdvertise,
		Fsync:             fsync,
		LogStore:          logStore,
		Bootstrap:         cl == nil, // a cluster bootstraps through gossip
		Rules:             keyspace.Rules(o.packed),
		Logger:            logger,
		SnapshotThreshold: o.snapshotThreshold,
		SnapshotInterval:  o.snapshotInterval,
		Peers:             peers,
		Transport:         transport,
		MaxStaleness:      o.cluster.maxStaleness,
		CommitTimeout:     o.cluster.commitTimeout,
		HeartbeatTimeout:  o.cluster.heartbeatTimeout,
		LeaseReads:        o.cluster.leaseReads,
		ElectionTimeout:   o.cluster.electionTimeout,
	})
	if err != nil {
		return err
	}
	n.SetMaxMemory(uint64(o.limits.maxMemory))
	srv := resp.NewServer(ctls.config(resp.Config{
		Addr:        o.addr,
		UnixSocket:  o.unixSocket,
		RequirePass: o.requirePass,
		Double70:    o.doubleFormat == "7.0",
		Version:     version,
		RunID:       fmt.Sprintf("%040x", time.Now().UnixNano()),
		OperatorACL: operatorACL,
		MaxClients:  o.limits.maxClients,
		Logger:      logger,

		QueryBufferLimit:  int64(o.limits.queryBufferLimit),
		OutputBufferLimit: o.limits.outputBuffer,
		EventLoop:         useEventLoop(o.eventLoop),
	}), n)
	if err := srv.Listen(); err != nil {
		n.Close()
		return err
	}
	srv.SyncACL()
	srv.Serve()
	stopMetrics, err := o.obs.serveMetrics(srv, n, ctls, logger)
	if err != nil {
		srv.Close()
		n.Close()
		return err
	}
	defer stopMetrics()
	if cl != nil {
		// Gossip starts once this node answers RESP: peers that learn of
		// it may forward to it at once.
		if err := cl.Start(n); err != nil {
			srv.Close()
			n.Close()
			return err
		}
	}
	started = true
	logger.Info("ready to accept connections", "addr", addrText(srv.Addr()), "tls", addrText(srv.TLSAddr()), "raft", o.raftAddr, "data", o.data, "fsync", fsync.String(), "runtime", tuned)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	s := <-sig
	for ; s == syscall.SIGHUP; s = <-sig {
		// Reload what can be reloaded; the client TLS files reload on
		// their own signal handler.
		if cl != nil && creds.credentials() != nil {
			if err := o.plane.reload(creds, cl); err != nil {
				logger.Error("SIGHUP: cluster credentials not reloaded; the ones in use stay", "error", err)
			} else {
				logger.Info("SIGHUP: cluster credentials reloaded")
			}
		}
	}
	logger.Info("shutting down", "signal", s.String())
	// Clients first: the commands in flight are answered while this node
	// is still a full member (a leader still leads), and their
	// connections close, so clients go on at another node. Then the
	// node leaves: a leader hands over leadership first. A client that
	// stayed would wait on a node that is no longer in the configuration.
	// A write held by a log that cannot be written (a full disk) is
	// answered with its error first: its connection would keep the stop
	// waiting.
	n.Stopping()
	srv.Close()
	if cl != nil {
		stopCluster(cl, o, logger)
	}
	stopMetrics() // stop taking scrapes before the node closes
	if err := n.Close(); err != nil {
		return fmt.Errorf("closing node: %w", err)
	}
	logger.Info("bye")
	return nil
}

// ping is the healthcheck subcommand: PING the node at --addr.
func ping(args []string) int {
	fs := flag.NewFlagSet("goblind ping", flag.ContinueOnError)
	addr := fs.String("addr", envOr("GOBLIN_ADDR", "127.0.0.1:6379"), "node to ping")
	defPass, _, err := envValue("GOBLIN_REQUIREPASS", false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind ping: GOBLIN_REQUIREPASS_FILE:", err)
		return 2
	}
	pass := fs.String("requirepass", defPass, "password (default: GOBLIN_REQUIREPASS, or the file GOBLIN_REQUIREPASS_FILE names)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after")
	pt := registerPingTLS(fs)
	if err := parseArgs(fs, args, os.Stdout); err != nil {
		return exitParse(err)
	}
	tlsConfig, err := pt.config(fs, addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind ping:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := pingNode(ctx, *addr, *pass, tlsConfig); err != nil {
		fmt.Fprintln(os.Stderr, "goblind ping:", err)
		return 1
	}
	fmt.Println("PONG")
	return 0
}

func envOr(k, def string) string {
	if v, ok := os.LookupEnv(k); ok {
		return v
	}
	return def
}

// exitParse is a subcommand's exit status when parsing its flags stopped:
// 0 when help was asked for, 2 for a bad command line.
func exitParse(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
