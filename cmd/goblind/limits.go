package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/goblindb/goblin/resp"
)

// limitOptions are the client and memory limits, named and meant as
// Redis's settings of the same names (docs/operations.md, "Limits").
type limitOptions struct {
	maxClients       int64
	maxMemory        maxMemoryValue
	queryBufferLimit memoryValue
	outputBuffer     string
}

func (l *limitOptions) register(fs *flag.FlagSet) {
	fs.Int64Var(&l.maxClients, "maxclients", 10000, "client connections held at once; more are refused with Redis's error (lowered at start to what the open files limit holds)")
	l.queryBufferLimit = 1 << 30
	fs.Var(&l.queryBufferLimit, "client-query-buffer-limit", "bytes of incomplete requests a client may send before it is closed (at least 1mb)")
	fs.StringVar(&l.outputBuffer, "client-output-buffer-limit", "normal 0 0 0", "'normal HARD SOFT SECONDS': a client whose waiting replies reach HARD bytes, or stay at SOFT bytes for SECONDS, is closed (0: no limit), as Redis's setting")
	fs.Var(&l.maxMemory, "maxmemory", "used memory (the Go heap) above which writes that may grow it are refused with -OOM, in bytes or with Redis's units (100mb, 2gb); 0: no limit")
}

// check validates the limits before anything starts.
func (l *limitOptions) check() error {
	if l.maxClients < 1 { // the server would take it as 10000
		return fmt.Errorf("--maxclients must be at least 1, not %d", l.maxClients)
	}
	if l.queryBufferLimit < 1<<20 {
		return fmt.Errorf("--client-query-buffer-limit must be at least 1mb")
	}
	if err := resp.CheckOutputBufferLimit(l.outputBuffer); err != nil {
		return fmt.Errorf("--client-output-buffer-limit: %w", err)
	}
	return nil
}

// memoryValue is a byte count given as Redis writes them: digits and an
// optional unit (b, k, kb, m, mb, g, gb).
type memoryValue int64

func (m *memoryValue) String() string { return strconv.FormatInt(int64(*m), 10) }

func (m *memoryValue) Set(v string) error {
	n, ok := resp.ParseMemory(v)
	if !ok {
		return fmt.Errorf("%q is not a memory value (bytes, or a number with b, k, kb, m, mb, g or gb)", v)
	}
	*m = memoryValue(n)
	return nil
}

// maxMemoryValue is --maxmemory: a memoryValue up to 2^64-1, as Redis's
// maxmemory takes.
type maxMemoryValue uint64

func (m *maxMemoryValue) String() string { return strconv.FormatUint(uint64(*m), 10) }

func (m *maxMemoryValue) Set(v string) error {
	n, ok := resp.ParseMemoryUint64(v)
	if !ok {
		return fmt.Errorf("%q is not a memory value up to 18446744073709551615 bytes (bytes, or a number with b, k, kb, m, mb, g or gb)", v)
	}
	*m = maxMemoryValue(n)
	return nil
}
