package e2e

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// RedisServer is a redis-server process started by a test, the reference
// Goblin is compared against.
type RedisServer struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts redis-server on a free loopback port without
// persistence. It skips the test when redis-server is not installed, unless
// GOBLIN_REQUIRE_REDIS=1 (as in CI), where it fails instead.
func StartRedis(t testing.TB, extra ...string) *RedisServer {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-server not found and GOBLIN_REQUIRE_REDIS=1")
		}
		t.Skip("redis-server not installed (apt-get install -y redis-server)")
	}
	addr := FreeAddr(t, "")
	port := portOf(t, addr)
	args := append([]string{"--port", itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--protected-mode", "no"}, extra...)
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	r := &RedisServer{Addr: addr, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.done
	})
	Eventually(t, 10*time.Second, func() error {
		c, err := dialOnce(addr)
		if err == nil {
			c.Close()
		}
		return err
	})
	return r
}

func itoa(n int) string { return strconv.Itoa(n) }

func dialOnce(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, time.Second) }
