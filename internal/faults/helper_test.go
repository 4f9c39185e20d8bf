package faults

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as a fake node when FAULTS_HELPER is set: it
// serves an echo on a "node" port (TCP and UDP) and a "client" port
// (TCP), prints "ports NODE CLIENT", and then answers commands on stdin:
//
//	tcp ADDR    dial ADDR, send a line, expect it back
//	udp ADDR    send a datagram to ADDR, expect it back
//	hold ADDR   open a connection to ADDR and keep it
//	held        send a line on the kept connection, expect it back
//
// each with "ok" or "fail REASON".
//
// In a container it serves an echo on port 7000 (FAULTS_HELPER=serve), or
// exits 0 when it can echo a line through FAULTS_ADDR within 500 ms
// (FAULTS_HELPER=probe).
func TestMain(m *testing.M) {
	switch os.Getenv("FAULTS_HELPER") {
	case "1":
		helperMain()
		return
	case "serve":
		ln, err := net.Listen("tcp", ":7000")
		if err != nil {
			panic(err)
		}
		echoTCP(ln)
		return
	case "probe":
		c, err := net.DialTimeout("tcp", os.Getenv("FAULTS_ADDR"), 500*time.Millisecond)
		if err == nil {
			err = roundTrip(c)
		}
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helperMain() {
	host := os.Getenv("FAULTS_HOST")
	nodeLn, err := net.Listen("tcp", host+":0")
	if err != nil {
		panic(err)
	}
	port := nodeLn.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenPacket("udp", fmt.Sprintf("%s:%d", host, port))
	if err != nil {
		panic(err)
	}
	clientLn, err := net.Listen("tcp", host+":0")
	if err != nil {
		panic(err)
	}
	go echoTCP(nodeLn)
	go echoTCP(clientLn)
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			udp.WriteTo(buf[:n], from)
		}
	}()
	fmt.Printf("ports %d %d\n", port, clientLn.Addr().(*net.TCPAddr).Port)
	var held net.Conn
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		verb, addr, _ := strings.Cut(sc.Text(), " ")
		var err error
		switch verb {
		case "tcp":
			var c net.Conn
			if c, err = net.DialTimeout("tcp", addr, 500*time.Millisecond); err == nil {
				err = roundTrip(c)
				c.Close()
			}
		case "udp":
			var c net.Conn
			if c, err = net.Dial("udp", addr); err == nil {
				err = roundTrip(c)
				c.Close()
			}
		case "hold":
			held, err = net.DialTimeout("tcp", addr, 500*time.Millisecond)
		case "held":
			err = roundTrip(held)
		}
		if err != nil {
			fmt.Printf("fail %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println("ok")
		}
	}
}

func echoTCP(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go io.Copy(c, c)
	}
}

// roundTrip writes a line on c and waits up to 500 ms for it to come back.
func roundTrip(c net.Conn) error {
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	buf := make([]byte, 5)
	_, err := io.ReadFull(c, buf)
	return err
}

// fakeNode is a helper process started by a test.
type fakeNode struct {
	t          *testing.T
	name, host string
	node       int // node port (TCP and UDP)
	client     int // client port (TCP)
	cmd        *exec.Cmd
	mu         sync.Mutex
	in         io.WriteCloser
	out        *bufio.Scanner
}

func startFake(t *testing.T, name, host string) *fakeNode {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAULTS_HELPER=1", "FAULTS_HOST="+host)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &fakeNode{t: t, name: name, host: host, cmd: cmd, in: in, out: bufio.NewScanner(outp)}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if !f.out.Scan() {
		t.Fatalf("helper %s printed nothing", name)
	}
	if _, err := fmt.Sscanf(f.out.Text(), "ports %d %d", &f.node, &f.client); err != nil {
		t.Fatalf("helper %s: %q: %v", name, f.out.Text(), err)
	}
	return f
}

func (f *fakeNode) pid() int { return f.cmd.Process.Pid }

func (f *fakeNode) addr(port int) string { return fmt.Sprintf("%s:%d", f.host, port) }

// do runs one helper command and returns nil for "ok".
func (f *fakeNode) do(verb, addr string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.in, "%s %s\n", verb, addr)
	if !f.out.Scan() {
		return fmt.Errorf("helper %s died", f.name)
	}
	if line := f.out.Text(); line != "ok" {
		return fmt.Errorf("%s", line)
	}
	return nil
}

// reach expects f to reach to's port over proto ("tcp", "udp", "held").
func (f *fakeNode) reach(proto string, to *fakeNode, port int) {
	f.t.Helper()
	// A link that was just healed may drop one attempt: poll briefly.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f.do(proto, to.addr(port))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s cannot reach %s:%d over %s: %v", f.name, to.name, port, proto, err)
		}
	}
}

// blocked expects f not to reach to's port over proto.
func (f *fakeNode) blocked(proto string, to *fakeNode, port int) {
	f.t.Helper()
	if err := f.do(proto, to.addr(port)); err == nil {
		f.t.Fatalf("%s reaches %s:%d over %s through the partition", f.name, to.name, port, proto)
	}
}
