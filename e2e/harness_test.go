package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// goblindBin is the goblind binary built once for the whole test run.
var goblindBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goblin-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goblindBin = filepath.Join(dir, "goblind")
	build := exec.Command("go", "build", "-o", goblindBin, "../cmd/goblind")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building goblind:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Goblind is one goblind process started by a test.
type Goblind struct {
	t    testing.TB
	Addr string // RESP address
	Raft string // Raft address
	Data string // data directory
	Args []string
	// Password is the node's requirepass, which WaitReady and Client
	// authenticate with ("" for none).
	Password string
	// Wrap is the command goblind runs under (NodeOptions.Wrap).
	Wrap []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	logs *testutil.SyncBuffer
	done chan struct{}
}

// NodeOptions configure StartGoblind.
type NodeOptions struct {
	Addr, Raft, Data string   // defaults: free loopback ports, a temp dir
	Args             []string // extra flags
	Env              []string // extra environment (KEY=VALUE)
	Password         string   // the requirepass the flags or environment give
	// NoWait returns without waiting for the node to answer PING.
	NoWait bool
	// Wrap, when set, runs goblind under this command, which must exec it
	// with its arguments (e.g. prlimit --nofile=300 --).
	Wrap []string
}

// StartGoblind starts goblind and waits until it answers PING. The process
// is stopped when the test ends; its log is printed if the test failed.
func StartGoblind(t testing.TB, o NodeOptions) *Goblind {
	t.Helper()
	if o.Addr == "" {
		o.Addr = testutil.FreeAddr(t, "")
	}
	if o.Raft == "" {
		o.Raft = testutil.FreeAddr(t, "")
	}
	if o.Data == "" {
		o.Data = t.TempDir()
	}
	g := &Goblind{t: t, Addr: o.Addr, Raft: o.Raft, Data: o.Data, Password: o.Password, Wrap: o.Wrap}
	g.Args = append([]string{"--addr", o.Addr, "--raft-addr", o.Raft, "--data", o.Data, "--log-level", "warn"}, o.Args...)
	g.start(o.Env)
	t.Cleanup(func() {
		g.Stop()
		if t.Failed() {
			t.Logf("goblind %s log:\n%s", g.Addr, g.Log())
		}
	})
	if !o.NoWait {
		g.WaitReady(20 * time.Second)
	}
	return g
}

func (g *Goblind) start(env []string) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	argv := append(append(append([]string(nil), g.Wrap...), goblindBin), g.Args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	if g.logs == nil {
		g.logs = &testutil.SyncBuffer{}
	}
	cmd.Stdout, cmd.Stderr = g.logs, g.logs
	if err := cmd.Start(); err != nil {
		g.t.Fatalf("starting goblind: %v", err)
	}
	g.cmd = cmd
	done := make(chan struct{})
	g.done = done
	go func() {
		cmd.Wait()
		close(done)
	}()
}

// Log returns what the process has written so far.
func (g *Goblind) Log() string { return g.logs.String() }

// WaitReady polls until the node answers PING, failing the test after d.
func (g *Goblind) WaitReady(d time.Duration) {
	g.t.Helper()
	deadline := time.Now().Add(d)
	c := redis.NewClient(&redis.Options{Addr: g.Addr, Password: g.Password, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-g.done:
			g.t.Fatalf("goblind exited before answering PING:\n%s", g.Log())
		default:
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("goblind at %s did not answer PING within %v: %v\n%s", g.Addr, d, err, g.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Running reports whether the process is alive.
func (g *Goblind) Running() bool {
	select {
	case <-g.done:
		return false
	default:
		return g.done != nil
	}
}

// Stop sends SIGTERM and waits for a graceful exit (SIGKILL after 15 s).
func (g *Goblind) Stop() {
	g.signal(syscall.SIGTERM, 15*time.Second)
}

// Kill sends SIGKILL and waits for the process to die.
func (g *Goblind) Kill() {
	g.signal(syscall.SIGKILL, 15*time.Second)
}

func (g *Goblind) signal(sig syscall.Signal, wait time.Duration) {
	g.mu.Lock()
	cmd, done := g.cmd, g.done
	g.mu.Unlock()
	if cmd == nil || !g.Running() {
		return
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(wait):
		cmd.Process.Kill()
		<-done
	}
}

// ExitCode returns the exit code of a stopped process (-1 if running).
func (g *Goblind) ExitCode() int {
	if g.Running() {
		return -1
	}
	return g.cmd.ProcessState.ExitCode()
}

// Restart starts the process again with the same flags and data directory
// and waits until it answers PING.
func (g *Goblind) Restart() {
	g.t.Helper()
	if g.Running() {
		g.t.Fatalf("Restart of a running goblind")
	}
	g.start(nil)
	g.WaitReady(30 * time.Second)
}

// Client returns a go-redis client for the node, closed at test end.
func (g *Goblind) Client(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: g.Addr, Password: g.Password, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	g.t.Cleanup(func() { c.Close() })
	return c
}

// portOf returns the numeric port of a host:port address.
func portOf(t testing.TB, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}
