package raftfsm

import (
	"strconv"
	"testing"

	"github.com/hashicorp/raft"
)

// BenchmarkApplyBatch applies batches of 64 single-ZADD entries, as raft
// hands them to the FSM under load; one op is one entry.
func BenchmarkApplyBatch(b *testing.B) {
	const batch, members = 64, 1 << 14
	data := make([][]byte, members)
	for i := range data {
		data[i] = commandEntry(1, NewCommand(0, "ZADD", "k", strconv.Itoa(i%7), strconv.Itoa(i))).Encode(nil)
	}
	logs := make([]*raft.Log, batch)
	for i := range logs {
		logs[i] = &raft.Log{Type: raft.LogCommand}
	}
	f := New()
	index := uint64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		n := min(batch, b.N-done)
		for _, l := range logs[:n] {
			index++
			l.Index, l.Data = index, data[index%members]
		}
		f.ApplyBatch(logs[:n])
	}
}

// BenchmarkEncodeCommand encodes a proposal of one ZINCRBY, as a client's
// write is encoded before it is handed to Raft.
func BenchmarkEncodeCommand(b *testing.B) {
	e := commandEntry(1, NewCommand(0, "ZINCRBY", "bench:wiki", "1", "p12345"))
	e.Term, e.Proposal = 7, 1<<40
	b.ReportAllocs()
	for b.Loop() {
		if len(e.Encode(nil)) == 0 {
			b.Fatal("empty")
		}
	}
}
