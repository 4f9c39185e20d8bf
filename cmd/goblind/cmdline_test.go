package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// runMainEnv, set, makes the test binary run goblind's main with its
// arguments instead of the tests: goblind(t, ...) runs the command line
// as the real binary would.
const runMainEnv = "GOBLIND_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// goblind runs goblind with args in a process of its own and returns its
// standard output and error and its exit status. A command line that is
// not refused would start a node: it is killed after a while and the
// test fails.
func goblind(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("goblind %q still running after 30s: it started instead of exiting\n%s", args, errs.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errs.String(), code
}

// --help and -h write the usage to standard output and exit 0, for
// goblind and each subcommand; a flag it does not know still fails.
func TestHelp(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		out, errs, code := goblind(t, flag)
		if code != 0 || errs != "" {
			t.Errorf("goblind %s: exit %d, stderr %q", flag, code, errs)
		}
		for _, want := range []string{"usage:", "-log-level", "-max-staleness", "0: 75,", "GOBLIN_RAFT_ADDR"} {
			if !strings.Contains(out, want) {
				t.Errorf("goblind %s: no %q in the usage:\n%s", flag, want, out)
			}
		}
	}
	for _, sub := range []string{"ping", "backup", "restore", "import", "gencert"} {
		out, errs, code := goblind(t, sub, "-h")
		if code != 0 || errs != "" || !strings.Contains(out, "-addr") && !strings.Contains(out, "-ca-dir") {
			t.Errorf("goblind %s -h: exit %d, stdout %q, stderr %q", sub, code, out, errs)
		}
	}
	out, errs, code := goblind(t, "--no-such-flag")
	if code != 1 || out != "" || !strings.Contains(errs, "goblind: flag provided but not defined: -no-such-flag") {
		t.Errorf("an unknown flag: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code := goblind(t, "ping", "--no-such-flag"); code != 2 || !strings.Contains(errs, "-no-such-flag") {
		t.Errorf("goblind ping with an unknown flag: exit %d, stderr %q", code, errs)
	}
}

// A command line goblind refuses is refused before anything is created:
// no data directory, no Raft state, whatever the flag.
func TestRefusedCommandLineCreatesNothing(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-level", "bogus"}, `--log-level must be trace, debug, info, warn, error or off, not "bogus"`},
		{[]string{"--metrics-addr", "0.0.0.0:16591"}, "--metrics-addr 0.0.0.0:16591 is not a loopback address"},
		{[]string{"--metrics-addr", ":16591"}, "is not a loopback address"},
		{[]string{"--election-timeout", "100ms", "--heartbeat-timeout", "1s"}, "--election-timeout 100ms is shorter than --heartbeat-timeout 1s"},
		{[]string{"--procs", "-1"}, "--procs must be ≥ 0"},
		{[]string{"--event-loop", "yes"}, "--event-loop must be auto, on or off"},
		{[]string{"--maxclients", "0"}, "--maxclients must be at least 1, not 0"},
		{[]string{"--max-voters", "0", "--bootstrap-expect", "3"}, "--max-voters must be at least 1, not 0"},
		{[]string{"--bootstrap-expect", "-1"}, "--bootstrap-expect must be a number of nodes, not -1"},
		{[]string{"--tls-only"}, "--tls-only needs --tls-port"},
		{[]string{"--tls-port", "16592"}, "--tls-port needs --tls-cert-file and --tls-key-file"},
		{[]string{"--tls-port", "16592", "--tls-auth-clients", "no", "--tls-cert-file", "/nonexistent/c.pem", "--tls-key-file", "/nonexistent/k.pem"}, "TLS:"},
		{[]string{"--raft-addr", "0.0.0.0:16593", "--bootstrap-expect", "3"}, "(--raft-addr 0.0.0.0:16593)"},
		{[]string{"--addr", "127.0.0.1"}, "--raft-addr"},
		{[]string{"--addr", "127.0.0.1", "--raft-addr", "127.0.0.1:16594"}, "--addr: address 127.0.0.1: missing port"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		args := append([]string{"--addr", "127.0.0.1:16590", "--data", data}, tc.args...)
		_, errs, code := goblind(t, args...)
		if code != 1 || !strings.Contains(errs, "goblind: ") || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and %q", tc.args, code, errs, tc.want)
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: the data directory was created (%v)", tc.args, err)
		}
	}
}

// A start refused after the data directory was made (a taken port) removes
// the directory it made, parents included, and leaves one that existed.
func TestRefusedStartRemovesTheDirectoryItMade(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"resp port", []string{"--addr", taken}},
		{"metrics port", []string{"--addr", "127.0.0.1:0", "--metrics-addr", taken}},
	} {
		data := filepath.Join(root, "new", "data")
		_, errs, code := goblind(t, append([]string{"--data", data}, tc.args...)...)
		if code != 1 || !strings.Contains(errs, "address already in use") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and address already in use", tc.name, code, errs)
		}
		if _, err := os.Stat(filepath.Join(root, "new")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the directory made for --data is still there (%v)", tc.name, err)
		}
	}
	kept := filepath.Join(root, "kept")
	if err := os.Mkdir(kept, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, code := goblind(t, "--data", kept, "--addr", taken); code != 1 {
		t.Errorf("existing directory: exit %d, want 1", code)
	}
	if _, err := os.Stat(filepath.Join(kept, lockFile)); err != nil {
		t.Errorf("the existing data directory was removed or emptied: %v", err)
	}
}

// --log-level takes hclog's levels (in any case) and refuses the rest.
func TestLogLevelFlag(t *testing.T) {
	for _, level := range []string{"trace", "debug", "info", "warn", "error", "off", "WARN"} {
		if _, err := parseFlags([]string{"--log-level", level}); err != nil {
			t.Errorf("--log-level %s: %v", level, err)
		}
	}
	for _, level := range []string{"bogus", "warning", "notice", ""} {
		if _, err := parseFlags([]string{"--log-level", level}); err == nil || !strings.Contains(err.Error(), "trace, debug, info, warn, error or off") {
			t.Errorf("--log-level %q: %v", level, err)
		}
	}
	t.Setenv("GOBLIN_LOG_LEVEL", "verbose")
	if _, err := parseFlags(nil); err == nil || !strings.Contains(err.Error(), `--log-level must be`) {
		t.Errorf("GOBLIN_LOG_LEVEL=verbose: %v", err)
	}
}

// --maxmemory takes Redis's range, 0 to 2^64-1, in bytes or Redis's
// units; past it, or a unit Redis lacks, is refused with what it takes.
func TestMaxMemoryFlag(t *testing.T) {
	for v, want := range map[string]uint64{"0": 0, "": 0, "100mb": 100 << 20, "2GB": 2 << 30,
		"9223372036854775808": 1 << 63, "18446744073709551615": 1<<64 - 1, "17179869183gb": 17179869183 << 30} {
		o, err := parseFlags([]string{"--maxmemory", v})
		if err != nil {
			t.Errorf("--maxmemory %q: %v", v, err)
		} else if uint64(o.limits.maxMemory) != want {
			t.Errorf("--maxmemory %q: %d, want %d", v, o.limits.maxMemory, want)
		}
	}
	for _, v := range []string{"18446744073709551616", "17179869184gb", "-1", "1tb", "1.5gb"} {
		if _, err := parseFlags([]string{"--maxmemory", v}); err == nil || !strings.Contains(err.Error(), "not a memory value up to 18446744073709551615 bytes") {
			t.Errorf("--maxmemory %q: %v", v, err)
		}
	}
}

// A metrics endpoint off loopback needs client TLS (it is then served
// over HTTPS) or --metrics-allow-remote; the flags alone decide.
func TestMetricsAddrFlag(t *testing.T) {
	tlsArgs := []string{"--tls-port", "16595", "--tls-cert-file", "c.pem", "--tls-key-file", "k.pem", "--tls-auth-clients", "no"}
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--metrics-addr", "127.0.0.1:16596"}, true},
		{[]string{"--metrics-addr", "localhost:16596"}, true},
		{[]string{"--metrics-addr", "[::1]:16596"}, true},
		{[]string{"--metrics-addr", "0.0.0.0:16596"}, false},
		{[]string{"--metrics-addr", "10.0.0.1:16596"}, false},
		{[]string{"--metrics-addr", "0.0.0.0:16596", "--metrics-allow-remote"}, true},
		{append([]string{"--metrics-addr", "0.0.0.0:16596"}, tlsArgs...), true},
	} {
		_, err := parseFlags(tc.args)
		if tc.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "--metrics-allow-remote") {
			t.Errorf("%q: %v", tc.args, err)
		}
	}
}

// Raft's rules on its timings are checked with the flags, in goblind's
// words, naming the flags.
func TestRaftTimingFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for accepted
	}{
		{[]string{"--election-timeout", "100ms", "--heartbeat-timeout", "1s"}, "--election-timeout 100ms is shorter than --heartbeat-timeout 1s:"},
		{[]string{"--election-timeout", "100ms", "--bootstrap-expect", "3"}, "--election-timeout 100ms is shorter than --heartbeat-timeout 300ms (its default)"},
		{[]string{"--election-timeout", "100ms", "--join", "127.0.0.1:7946"}, "--election-timeout 100ms is shorter than --heartbeat-timeout 300ms (its default)"},
		{[]string{"--election-timeout", "100ms"}, ""}, // a single node's heartbeat timeout is 20ms
		{[]string{"--election-timeout", "10ms"}, "--election-timeout 10ms is shorter than --heartbeat-timeout 20ms (its default for a single node): Raft needs it at least as long; raise --election-timeout, or leave it unset (--heartbeat-timeout)"},
		{[]string{"--heartbeat-timeout", "1s"}, ""},
		{[]string{"--heartbeat-timeout", "1s", "--election-timeout", "1s"}, ""},
		{[]string{"--heartbeat-timeout", "100ms", "--election-timeout", "150ms"}, ""},
		{[]string{"--heartbeat-timeout", "1ms"}, "--heartbeat-timeout must be at least 5ms"},
		{[]string{"--heartbeat-timeout", "-1s"}, "--heartbeat-timeout must be at least 5ms"},
		{[]string{"--heartbeat-timeout", "1ms", "--election-timeout", "2ms"}, "--heartbeat-timeout must be at least 5ms"},
		{[]string{"--heartbeat-timeout", "5ms", "--election-timeout", "2ms"}, "--election-timeout must be at least 5ms"},
		{[]string{"--commit-timeout", "500us"}, "--commit-timeout must be at least 1ms"},
		{[]string{"--commit-timeout", "1ms"}, ""},
		{[]string{"--snapshot-interval", "1ms"}, "--snapshot-interval must be at least 5ms"},
		{[]string{"--snapshot-interval", "-1s"}, "--snapshot-interval must be at least 5ms"},
		{[]string{"--snapshot-interval", "0"}, "--snapshot-interval must be at least 5ms, not 0s"},
		{[]string{"--snapshot-interval", "5ms"}, ""},
		{[]string{"--commit-timeout", "0"}, "--commit-timeout must be at least 1ms, not 0s"},
		{[]string{"--snapshot-threshold", "0"}, "--snapshot-threshold must be at least 1 entry, not 0"},
		{[]string{"--snapshot-threshold", "1"}, ""},
		{[]string{"--max-staleness", "0s"}, "--max-staleness must be positive"},
		{[]string{"--max-staleness", "-1s"}, "--max-staleness must be positive"},
		{[]string{"--max-staleness", "100ms"}, ""},
	} {
		_, err := parseFlags(tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one with %q", tc.args, err, tc.want)
		}
	}
}

// --gogc 0 (its default) is 75 unless GOGC is set, as the help and the
// README say; a value given is used.
func TestGOGCDefault(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment")
	}
	if got, err := tuneRuntime(0, 0); err != nil || !strings.Contains(got, "gogc=75") {
		t.Errorf("--gogc 0: %q %v", got, err)
	}
	if got, err := tuneRuntime(0, 120); err != nil || !strings.Contains(got, "gogc=120") {
		t.Errorf("--gogc 120: %q %v", got, err)
	}
}

// --procs 0 runs one thread where two CPUs or fewer are available, every
// CPU otherwise; an environment GOMAXPROCS is left alone.
func TestDefaultProcs(t *testing.T) {
	for _, c := range []struct {
		available int
		set       bool
		want      int
	}{
		{1, false, 1}, {2, false, 1}, {3, false, 0}, {64, false, 0}, {2, true, 0}, {1, true, 0},
	} {
		if got := defaultProcs(c.available, c.set); got != c.want {
			t.Errorf("%d CPUs, GOMAXPROCS set %v: %d, want %d", c.available, c.set, got, c.want)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	if got, err := tuneRuntime(0, 0); err != nil || !strings.Contains(got, "procs=1 ") {
		t.Errorf("--procs 0 with 2 CPUs: %q %v", got, err)
	}
	runtime.GOMAXPROCS(2)
	if got, err := tuneRuntime(2, 0); err != nil || !strings.Contains(got, "procs=2 ") {
		t.Errorf("--procs 2: %q %v", got, err)
	}
}

func TestUseEventLoop(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for _, c := range []struct {
		mode  string
		procs int
		want  bool
	}{
		{"on", 2, true}, {"off", 1, false}, {"auto", 1, true}, {"auto", 2, false},
	} {
		runtime.GOMAXPROCS(c.procs)
		if got := useEventLoop(c.mode); got != c.want {
			t.Errorf("--event-loop %s with %d threads: %v, want %v", c.mode, c.procs, got, c.want)
		}
	}
}
