package faults

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPIDByPortAndListeningPorts(t *testing.T) {
	f := startFake(t, "a", "127.0.0.1")
	pid, err := PIDByPort(f.client)
	if err != nil {
		t.Fatal(err)
	}
	if pid != f.pid() {
		t.Fatalf("PIDByPort(%d) = %d, want %d", f.client, pid, f.pid())
	}
	if pid, err := PIDByAddr(f.addr(f.node)); err != nil || pid != f.pid() {
		t.Fatalf("PIDByAddr = %d, %v; want %d", pid, err, f.pid())
	}
	tcp, udp, err := ListeningPorts(f.pid())
	if err != nil {
		t.Fatal(err)
	}
	want := []int{f.node, f.client}
	slices.Sort(want)
	if !slices.Equal(tcp, want) {
		t.Fatalf("TCP ports %v, want %v", tcp, want)
	}
	if !slices.Equal(udp, []int{f.node}) {
		t.Fatalf("UDP ports %v, want [%d]", udp, f.node)
	}
	// A port nobody listens on.
	ln := startFake(t, "b", "127.0.0.1")
	port := ln.client
	ln.cmd.Process.Kill()
	ln.cmd.Wait()
	if pid, err := PIDByPort(port); err == nil {
		t.Fatalf("PIDByPort of a closed port = %d", pid)
	}
}

func TestPauseResumeKill(t *testing.T) {
	f := startFake(t, "a", "127.0.0.1")
	g := startFake(t, "b", "127.0.0.1")
	g.reach("tcp", f, f.client)
	if err := Pause(f.pid()); err != nil {
		t.Fatal(err)
	}
	if s := procState(f.pid()); s != "T" {
		t.Fatalf("state after Pause %q, want T", s)
	}
	// A stopped process accepts (the kernel does) but never echoes.
	g.blocked("tcp", f, f.client)
	if err := Resume(f.pid()); err != nil {
		t.Fatal(err)
	}
	g.reach("tcp", f, f.client)
	if err := Kill(f.pid()); err != nil {
		t.Fatal(err)
	}
	if Alive(f.pid()) {
		t.Fatal("alive after Kill")
	}
	if err := Resume(f.pid()); err != nil {
		t.Fatalf("Resume of a dead process: %v", err)
	}
}

// ReadCommand captures what Start needs to run the process again.
func TestReadCommandAndStart(t *testing.T) {
	f := startFake(t, "a", "127.0.0.1")
	c, err := ReadCommand(f.pid())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Args) != 2 || c.Args[1] != "-test.run=^$" {
		t.Fatalf("args %q", c.Args)
	}
	if !slices.Contains(c.Env, "FAULTS_HELPER=1") {
		t.Fatalf("environment lacks FAULTS_HELPER=1: %d entries", len(c.Env))
	}
	wd, _ := os.Getwd()
	if c.Dir != wd {
		t.Fatalf("dir %q, want %q", c.Dir, wd)
	}
	if filepath.Base(c.Path) != filepath.Base(os.Args[0]) {
		t.Fatalf("path %q, want the test binary %q", c.Path, os.Args[0])
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd, err := c.Start(log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The copy prints its ports and serves; its stdin is /dev/null, so it
	// keeps serving until killed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw, _ := os.ReadFile(log.Name())
		if strings.HasPrefix(string(raw), "ports ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted copy printed %q", raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sid, _ := getsid(cmd.Process.Pid)
	if sid != cmd.Process.Pid {
		t.Fatalf("restarted copy is in session %d, want its own", sid)
	}
}
