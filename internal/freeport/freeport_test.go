package freeport

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// holderEnv makes the test binary a helper process that claims a port,
// prints it, and holds it until its standard input closes.
const holderEnv = "GOBLIN_FREEPORT_HOLDER"

func TestMain(m *testing.M) {
	if os.Getenv(holderEnv) == "1" {
		addr, err := Addr("")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		_, port, _ := net.SplitHostPort(addr)
		fmt.Println(port)
		var b [1]byte
		os.Stdin.Read(b[:]) // until the parent closes it
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPortsAreClaimedAcrossProcesses: a port another live process was
// handed is not handed here, and is again once that process ended.
func TestPortsAreClaimedAcrossProcesses(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var line string
	if _, err := fmt.Fscanln(out, &line); err != nil {
		t.Fatalf("the holder printed no port: %v", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the holder printed %q", line)
	}
	if claim(port) {
		t.Fatalf("port %d, held by another process, was claimed here too", port)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !claim(port) {
		t.Fatalf("port %d was not claimed here once its holder ended", port)
	}
}

// TestAddrHandsEachPortOnce: within a process no port is handed twice.
func TestAddrHandsEachPortOnce(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		addr, err := Addr("")
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s handed twice", addr)
		}
		seen[addr] = true
	}
}
