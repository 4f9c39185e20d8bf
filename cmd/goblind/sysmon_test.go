package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goblind runs with GODEBUG schedtrace set, in the same process, keeping
// the rest of GODEBUG and the environment; a schedtrace setting of the
// environment's own is left alone.
func TestMonitorKeptAwake(t *testing.T) {
	for _, tc := range []struct {
		godebug string // "-": unset
		want    string
	}{
		{"-", "schedtrace=" + schedtracePeriod},
		{"", "schedtrace=" + schedtracePeriod},
		{"madvdontneed=1", "madvdontneed=1,schedtrace=" + schedtracePeriod},
		{"schedtrace=0", "schedtrace=0"},
		{"madvdontneed=1, schedtrace=5000", "madvdontneed=1, schedtrace=5000"},
	} {
		env := []string{runMainEnv + "=1", "GOBLIN_TEST_MARK=kept"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GODEBUG=") {
				env = append(env, kv)
			}
		}
		if tc.godebug != "-" {
			env = append(env, "GODEBUG="+tc.godebug)
		}
		environ := startedEnviron(t, env)
		if got := environ["GODEBUG"]; got != tc.want {
			t.Errorf("GODEBUG %q: the node runs with GODEBUG %q, want %q", tc.godebug, got, tc.want)
		}
		if environ["GOBLIN_TEST_MARK"] != "kept" {
			t.Errorf("GODEBUG %q: the rest of the environment was not kept: %v", tc.godebug, environ)
		}
	}
}

// startedEnviron starts goblind with env, waits until it serves, and
// returns the environment of its process then. It stops the node.
func startedEnviron(t *testing.T, env []string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	ready := false
	for sc := bufio.NewScanner(stderr); !ready && sc.Scan(); {
		ready = strings.Contains(sc.Text(), "ready to accept connections")
	}
	if !ready {
		t.Fatal("goblind did not start")
	}
	go func() { // keep its standard error flowing
		buf := make([]byte, 4096)
		for {
			if _, err := stderr.Read(buf); err != nil {
				return
			}
		}
	}()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	environ := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			environ[k] = v
		}
	}
	return environ
}
