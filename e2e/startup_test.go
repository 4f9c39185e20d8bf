package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// Startup failures: whatever goblind cannot set up at start (a port another
// process holds, a data directory in use or unusable) makes it exit at
// once with a non-zero code and the error in its log, so a supervisor or a
// Docker restart policy sees the failure. Each case starts goblind beside
// a socket or process that holds what it needs.

// held are the addresses holdTCP holds.
var held = map[string]bool{}

// holdTCP listens on addr for the rest of the test.
func holdTCP(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	held[addr] = true
	t.Cleanup(func() {
		ln.Close()
		delete(held, addr)
	})
}

// holdUDP binds a UDP socket on addr for the rest of the test.
func holdUDP(t *testing.T, addr string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
}

// startupExit waits for a goblind that should fail to start, and checks
// that it exited non-zero with want in its log and that its RESP port,
// which it may have opened before failing, is closed (unless the test
// holds it).
func startupExit(t *testing.T, g *Goblind, want string) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, func() error {
		if g.Running() {
			return fmt.Errorf("goblind still running")
		}
		return nil
	})
	if code := g.ExitCode(); code == 0 {
		t.Fatalf("exit code 0:\n%s", g.Log())
	}
	if !strings.Contains(g.Log(), want) {
		t.Fatalf("the log does not say %q:\n%s", want, g.Log())
	}
	if held[g.Addr] {
		return
	}
	if c, err := net.DialTimeout("tcp", g.Addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("something still listens on the RESP address %s", g.Addr)
	}
}

func TestStartupTakenPort(t *testing.T) {
	p := newPKI(t)
	inUse := "address already in use"
	for _, tc := range []struct {
		name string
		// args returns goblind's extra flags and takes what it needs.
		args func(t *testing.T, o *NodeOptions) []string
	}{
		{"resp", func(t *testing.T, o *NodeOptions) []string {
			o.Addr = testutil.FreeAddr(t, "")
			holdTCP(t, o.Addr)
			return nil
		}},
		{"tls", func(t *testing.T, o *NodeOptions) []string {
			addr := testutil.FreeAddr(t, "")
			holdTCP(t, addr)
			return []string{"--tls-port", fmt.Sprint(portOf(t, addr)),
				"--tls-cert-file", p.server.Cert, "--tls-key-file", p.server.Key, "--tls-ca-cert-file", p.server.CA}
		}},
		{"raft", func(t *testing.T, o *NodeOptions) []string {
			o.Raft = testutil.FreeAddr(t, "")
			holdTCP(t, o.Raft)
			return []string{"--bootstrap-expect", "1", "--gossip-addr", testutil.FreeAddr(t, "")}
		}},
		{"gossip tcp", func(t *testing.T, o *NodeOptions) []string {
			addr := testutil.FreeAddr(t, "")
			holdTCP(t, addr)
			return []string{"--bootstrap-expect", "1", "--gossip-addr", addr}
		}},
		{"gossip udp only", func(t *testing.T, o *NodeOptions) []string {
			addr := testutil.FreeAddr(t, "")
			holdUDP(t, addr)
			return []string{"--bootstrap-expect", "1", "--gossip-addr", addr}
		}},
		{"pprof", func(t *testing.T, o *NodeOptions) []string {
			addr := testutil.FreeAddr(t, "")
			holdTCP(t, addr)
			return []string{"--pprof", addr}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NodeOptions{NoWait: true}
			o.Args = tc.args(t, &o)
			g := StartGoblind(t, o)
			startupExit(t, g, inUse)
		})
	}
}

func TestStartupUnixSocketUnusable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "no-such-dir", "goblin.sock")
	g := StartGoblind(t, NodeOptions{NoWait: true, Args: []string{"--unixsocket", sock}})
	startupExit(t, g, sock)
}

func TestStartupDataDirectory(t *testing.T) {
	t.Run("in use", func(t *testing.T) {
		first := StartGoblind(t, NodeOptions{})
		second := StartGoblind(t, NodeOptions{Data: first.Data, NoWait: true})
		startupExit(t, second, "is in use by another goblind")
		if !first.Running() {
			t.Fatalf("the first goblind stopped:\n%s", first.Log())
		}
		if err := first.Client().Ping(t.Context()).Err(); err != nil {
			t.Fatalf("the first goblind does not answer: %v", err)
		}
	})
	t.Run("a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		g := StartGoblind(t, NodeOptions{Data: file, NoWait: true})
		startupExit(t, g, "not a directory")
	})
	t.Run("released on exit", func(t *testing.T) {
		// A killed goblind leaves no lock behind: the next one starts.
		g := StartGoblind(t, NodeOptions{})
		g.Kill()
		g.Restart()
	})
}
