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

// BenchmarkForwardedEntry: what a leader does to each entry a follower
// forwards before proposing it (forwardedEntry): a client's ZADD alone,
// and a pipeline of 16 as one batch entry, as redis-benchmark -P 16
// sends them through a follower.
func BenchmarkForwardedEntry(b *testing.B) {
	now := time.Now().UnixMilli()
	one := raftfsm.CommandEntry(now, 0, "zadd", "bench:k", "12345", "m:12345")
	batch := &raftfsm.Entry{Op: raftfsm.OpBatch, Proto: 2, Time: now}
	for i := range 16 {
		batch.Commands = append(batch.Commands, raftfsm.NewCommand(0, "zadd", "bench:k", strconv.Itoa(i), "m:"+strconv.Itoa(i)))
	}
	for _, c := range []struct {
		name string
		e    *raftfsm.Entry
	}{{"zadd", one}, {"batch16", batch}} {
		c.e.Term, c.e.Proposal = 7, 99
		data := c.e.Encode(nil)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out, term, prop, err := forwardedEntry(data, now+int64(i))
				if err != nil || term != 7 || prop != 99 || len(out) < len(data)-8 {
					b.Fatalf("forwardedEntry: %d bytes, term %d, proposal %d, %v", len(out), term, prop, err)
				}
			}
		})
	}
}
