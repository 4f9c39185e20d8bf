package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
)

// The pprof server does not serve the command line, which may carry
// --requirepass; the profiles it does serve answer.
func TestPprofHidesTheCommandLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := startProfiling(addr, "")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	os.Args = append(os.Args, "--requirepass", "s3cret-in-argv")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/debug/pprof/cmdline"); code == http.StatusOK || strings.Contains(body, "s3cret") {
		t.Fatalf("/debug/pprof/cmdline: %d %q", code, body)
	}
	if code, body := get("/debug/pprof/goroutine?debug=1"); code != http.StatusOK || strings.Contains(body, "s3cret") {
		t.Fatalf("/debug/pprof/goroutine: %d", code)
	}
}
