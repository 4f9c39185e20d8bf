package wal

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
)

// Deleting every entry (raft does after restoring a user snapshot) while
// readers read never shows them bounds without segments: each read finds
// its entry or ErrLogNotFound.
func TestDeleteAllWhileReading(t *testing.T) {
	l := open(t, t.TempDir(), Options{})
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var e raft.Log
			for !stop.Load() {
				last, _ := l.LastIndex()
				if err := l.GetLog(last, &e); err != nil && !errors.Is(err, raft.ErrLogNotFound) {
					t.Errorf("GetLog(%d): %v", last, err)
					return
				}
			}
		}()
	}
	next := uint64(1)
	for round := 0; round < 40; round++ {
		for range 3 {
			if err := l.StoreLog(&raft.Log{Index: next, Term: 1, Type: raft.LogCommand, Data: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := l.DeleteRange(0, next); err != nil {
			t.Fatal(err)
		}
		next += 2 // the next entry follows a hole, as after a restore
	}
	stop.Store(true)
	wg.Wait()
}
