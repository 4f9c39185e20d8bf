package faults

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// dockerNetwork creates a project's network, labelled as compose labels
// its own, and removes it when the test ends.
func dockerNetwork(t *testing.T, project string, args ...string) string {
	t.Helper()
	name := project + "_default"
	args = append([]string{"network", "create", "--label", "com.docker.compose.project=" + project}, args...)
	if out, err := exec.Command("docker", append(args, name)...).CombinedOutput(); err != nil {
		t.Skipf("docker network create: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "network", "rm", name).Run() })
	return name
}

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
	tag, project := testutil.DockerNames(t, "goblin-e2e")
	c := &Compose{Project: project, Timeout: 2 * time.Minute}
	if err := c.Available(); errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	sleeperImage(t, tag)
	netName := dockerNetwork(t, project, "--subnet", "10.213.0.0/24")
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

// helperImage builds an image of this test binary, static, from scratch.
func helperImage(t *testing.T, tag string) {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "test", "-c", "-o", filepath.Join(dir, "helper"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the helper: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY helper /helper\nENV FAULTS_HELPER=serve\nENTRYPOINT [\"/helper\"]\n"), 0o644)
	if out, err := exec.Command("docker", "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })
}

// A ComposeNetwork cuts containers from each other by address while the
// host still reaches their published ports, and survives a restart.
func TestComposeNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs containers")
	}
	tag, project := testutil.DockerNames(t, "goblin-e2e")
	c := &Compose{Project: project, Timeout: 2 * time.Minute}
	if err := c.Available(); errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	helperImage(t, tag)
	netName := dockerNetwork(t, project)
	published := map[string]string{}
	for _, s := range []string{"a", "b", "c"} {
		name := project + "-" + s + "-1"
		out, err := exec.Command("docker", "run", "-d", "--name", name, "--network", netName, "--network-alias", s,
			"-p", "127.0.0.1::7000", "--label", "com.docker.compose.project="+project,
			"--label", "com.docker.compose.service="+s, tag).CombinedOutput()
		if err != nil {
			t.Fatalf("docker run: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
		ports, err := c.PublishedPorts(s)
		if err != nil || len(ports) != 1 {
			t.Fatalf("published ports of %s: %v %v", s, ports, err)
		}
		published[s] = "127.0.0.1:" + ports[0]
	}
	probe := func(from, to string) error {
		id, _ := c.Container(from)
		out, err := exec.Command("docker", "exec", "-e", "FAULTS_HELPER=probe", "-e", "FAULTS_ADDR="+to+":7000", id, "/helper").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	reach := func(from, to string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := probe(from, to)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s cannot reach %s: %v", from, to, err)
			}
		}
	}
	blocked := func(from, to string) {
		t.Helper()
		if err := probe(from, to); err == nil {
			t.Fatalf("%s reaches %s through the partition", from, to)
		}
	}
	host := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			conn, err := net.DialTimeout("tcp", published[s], 500*time.Millisecond)
			if err == nil {
				err = roundTrip(conn)
				conn.Close()
			}
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the host cannot reach %s's published port: %v", s, err)
			}
		}
	}
	reach("a", "b")
	n, err := c.Network("a", "b", "c")
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if err := n.Isolate("a"); err != nil {
		t.Fatal(err)
	}
	blocked("a", "b")
	blocked("c", "a")
	reach("b", "c")
	host("a")
	if err := n.Bridge("a"); err != nil {
		t.Fatal(err)
	}
	reach("a", "b")
	blocked("b", "c")
	// A container restarted during a cut gets its rules again.
	if err := c.Kill("b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Start("b"); err != nil {
		t.Fatal(err)
	}
	if err := n.Bridge("a"); err != nil {
		t.Fatal(err)
	}
	blocked("b", "c")
	reach("b", "a")
	if err := n.Heal(); err != nil {
		t.Fatal(err)
	}
	reach("b", "c")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	reach("c", "a")
}
