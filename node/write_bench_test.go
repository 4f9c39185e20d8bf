package node

import (
	"strconv"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/threadcpu"
	"github.com/goblindb/goblin/raftfsm"
)

// BenchmarkProposeSequential: one writer with one ZADD in flight on a
// single node with --fsync everysec: what the node and Raft cost a write
// without a client, a socket or a disk wait (the Go side of bench/
// one-client.sh). Run it with GOMAXPROCS=1, as goblind runs on two CPUs.
// It reports the process's CPU time a write (every thread's user and
// system time, threadcpu.Process) besides the wall time, and checks the
// set's final state.
func BenchmarkProposeSequential(b *testing.B) {
	n := startNode(b, Config{Fsync: FsyncEverysec})
	const members = 50000
	entries := make([]*raftfsm.Entry, members)
	now := time.Now().UnixMilli()
	for i := range entries {
		m := strconv.Itoa(i)
		entries[i] = raftfsm.CommandEntry(now, 0, "zadd", "k", m, m)
	}
	b.ReportAllocs()
	cpu0 := threadcpu.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := n.Propose(entries[i%members])(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(threadcpu.Process()-cpu0)/float64(b.N), "cpu-ns/op")
	last := (b.N - 1) % members
	if got, want := score(n, "k", strconv.Itoa(last)), strconv.Itoa(last); got != want {
		b.Fatalf("score of member %d: %q, want %q", last, got, want)
	}
}
