package wal

import (
	"fmt"
	"testing"

	"github.com/hashicorp/raft"
)

// BenchmarkStoreLogs measures the append path: one StoreLogs call per
// iteration, with entries the size of a small ZADD, with and without an
// fdatasync per batch (goblind's --fsync always and everysec).
func BenchmarkStoreLogs(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, n := range []int{1, 64} {
			for _, pre := range []bool{false, true} {
				b.Run(fmt.Sprintf("sync=%v/batch=%d/prealloc=%v", sync, n, pre), func(b *testing.B) {
					l, err := Open(b.TempDir(), Options{SyncEveryBatch: sync, Preallocate: pre})
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					data := make([]byte, 100)
					batch := make([]*raft.Log, n)
					for i := range batch {
						batch[i] = &raft.Log{Type: raft.LogCommand, Data: data}
					}
					// The first append creates the segment: not what is measured.
					if err := l.StoreLog(&raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: data}); err != nil {
						b.Fatal(err)
					}
					next := uint64(2)
					b.SetBytes(int64(n * len(data)))
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						for _, e := range batch {
							e.Index, e.Term = next, 1
							next++
						}
						if err := l.StoreLogs(batch); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
