package faults

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sleeperImage builds a tiny image (a static binary that sleeps, from
// scratch: nothing is pulled) and returns its tag.
func sleeperImage(t *testing.T, tag string) {
	t.Helper()
	dir := t.TempDir()
	src := "package main\n\nimport \"time\"\n\nfunc main() {\n\tfor {\n\t\ttime.Sleep(time.Hour)\n\t}\n}\n"
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module sleeper\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY sleeper /sleeper\nENTRYPOINT [\"/sleeper\"]\n"), 0o644)
	build := exec.Command("go", "build", "-o", "sleeper", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sleeper: %v\n%s", err, out)
	}
	if out, err := exec.Command("docker", "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })
}

// Compose finds a project's containers by their labels, kills, starts,
// pauses and unpauses them, and disconnects and reconnects one with its
// aliases and address.
func TestCompose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs a container")
	}
	project := fmt.Sprintf("faults-test-%d", os.Getpid())
	c := &Compose{Project: project, Timeout: 2 * time.Minute}
	if err := c.Available(); errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	tag := project + ":latest"
	sleeperImage(t, tag)
	netName := project + "_default"
	if out, err := exec.Command("docker", "network", "create", "--subnet", "10.213.0.0/24", netName).CombinedOutput(); err != nil {
		t.Skipf("docker network create: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "network", "rm", netName).Run() })
	name := project + "-s1-1"
	out, err := exec.Command("docker", "run", "-d", "--name", name, "--network", netName, "--network-alias", "s1",
		"--label", "com.docker.compose.project="+project, "--label", "com.docker.compose.service=s1", tag).CombinedOutput()
	if err != nil {
		t.Fatalf("docker run: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })

	svc, err := c.Services()
	if err != nil || len(svc) != 1 || !strings.HasPrefix(strings.TrimSpace(string(out)), svc["s1"]) {
		t.Fatalf("services %v, %v; want s1 = %s", svc, err, out)
	}
	state := func(want string) {
		t.Helper()
		if s, err := c.State("s1"); err != nil || s != want {
			t.Fatalf("state %q, %v; want %q", s, err, want)
		}
	}
	state("running")
	if err := c.Pause("s1"); err != nil {
		t.Fatal(err)
	}
	state("paused")
	if err := c.Unpause("s1"); err != nil {
		t.Fatal(err)
	}
	state("running")

	before, err := c.Networks("s1")
	if err != nil || len(before) != 1 || before[0].Network != netName || !slices.Contains(before[0].Aliases, "s1") {
		t.Fatalf("networks %+v, %v", before, err)
	}
	eps, err := c.Disconnect("s1")
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := c.Networks("s1"); len(now) != 0 {
		t.Fatalf("still on %+v after Disconnect", now)
	}
	if err := c.Connect("s1", eps); err != nil {
		t.Fatal(err)
	}
	after, err := c.Networks("s1")
	if err != nil || len(after) != 1 || after[0].IP != before[0].IP || !slices.Contains(after[0].Aliases, "s1") {
		t.Fatalf("after Connect %+v, %v; before %+v", after, err, before)
	}

	if err := c.Kill("s1"); err != nil {
		t.Fatal(err)
	}
	state("exited")
	if err := c.Start("s1"); err != nil {
		t.Fatal(err)
	}
	state("running")
	if _, err := c.Container("nope"); err == nil {
		t.Fatal("an unknown service was found")
	}
}
