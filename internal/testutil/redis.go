package testutil

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/freeport"
)

// FreeAddr returns host:port with a port that was free a moment ago and
// that no other test of this process was given (freeport.Addr). host
// defaults to 127.0.0.1.
func FreeAddr(t testing.TB, host string) string {
	t.Helper()
	addr, err := freeport.Addr(host)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Redis is a redis-server process started by a test: the reference
// Goblin is compared against.
type Redis struct {
	// Addr is its loopback host:port.
	Addr string
	// Version is what the binary reports, such as "7.2.4".
	Version string
	// Pid is the process's ID.
	Pid int
}

var redisVersion = regexp.MustCompile(`\bv=([0-9][0-9.]*)`)

// StartRedis starts $REDIS_SERVER (default: redis-server on PATH) on a
// free loopback port, without persistence, with extra arguments appended,
// and returns once it accepts connections; it is killed when the test
// ends. The test is skipped when the binary is missing, unless
// GOBLIN_REQUIRE_REDIS=1 (as in CI), where it fails instead.
func StartRedis(t testing.TB, extra ...string) *Redis {
	t.Helper()
	bin := os.Getenv("REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") == "1" {
			t.Fatalf("%s not found and GOBLIN_REQUIRE_REDIS=1", bin)
		}
		t.Skipf("%s not installed (apt-get install -y redis-server)", bin)
	}
	out, err := exec.Command(path, "--version").Output()
	m := redisVersion.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("%s --version: %v %q", bin, err, out)
	}
	addr := FreeAddr(t, "")
	_, port, _ := net.SplitHostPort(addr)
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--protected-mode", "no"}, extra...)
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	Poll(t, 10*time.Second, bin+" to accept connections on "+addr, func() bool {
		select {
		case <-exited:
			t.Fatalf("%s exited before accepting connections: %v", bin, cmd.ProcessState)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return &Redis{Addr: addr, Version: string(m[1]), Pid: cmd.Process.Pid}
}
