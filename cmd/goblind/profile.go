package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	rpprof "runtime/pprof"
)

// startProfiling serves net/http/pprof on addr (when set) and writes a CPU
// profile of the whole run to cpuFile (when set). Both are off by default.
// The returned function stops the CPU profile; call it on shutdown.
func startProfiling(addr, cpuFile string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range stops {
			f()
		}
	}
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return stop, fmt.Errorf("--pprof: %w", err)
		}
		// No /debug/pprof/cmdline: the command line may hold
		// --requirepass. What remains are stacks, samples and symbols.
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		srv := &http.Server{Handler: mux}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintln(os.Stderr, "goblind: pprof server:", err)
			}
		}()
		// Block and mutex profiles are only recorded when asked for.
		runtime.SetBlockProfileRate(0)
		stops = append(stops, func() { srv.Close() })
	}
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return stop, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := rpprof.StartCPUProfile(f); err != nil {
			f.Close()
			return stop, fmt.Errorf("--cpuprofile: %w", err)
		}
		stops = append(stops, func() {
			rpprof.StopCPUProfile()
			f.Close()
		})
	}
	return stop, nil
}
