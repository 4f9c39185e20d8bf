package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/raft"
)

func mkLog(r *rand.Rand, index, term uint64) *raft.Log {
	l := &raft.Log{Index: index, Term: term, Type: raft.LogType(r.IntN(6))}
	if r.IntN(4) > 0 {
		l.Data = make([]byte, r.IntN(200))
		for i := range l.Data {
			l.Data[i] = byte(r.Uint32())
		}
		if len(l.Data) == 0 {
			l.Data = nil
		}
	}
	if r.IntN(5) == 0 {
		l.Extensions = []byte(fmt.Sprintf("ext-%d", index))
	}
	if r.IntN(2) == 0 {
		l.AppendedAt = time.Unix(0, int64(r.Uint64()>>2))
	}
	return l
}

// model is what the log should hold.
type model map[uint64]*raft.Log

func sameLog(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type && bytes.Equal(a.Data, b.Data) &&
		bytes.Equal(a.Extensions, b.Extensions) && a.AppendedAt.Equal(b.AppendedAt)
}

func checkLog(t *testing.T, l *Log, m model, first, last uint64) {
	t.Helper()
	f, _ := l.FirstIndex()
	la, _ := l.LastIndex()
	if f != first || la != last {
		t.Fatalf("first, last = %d, %d; want %d, %d", f, la, first, last)
	}
	for i := first; i <= last && last != 0; i++ {
		var got raft.Log
		if err := l.GetLog(i, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
		if !sameLog(&got, m[i]) {
			t.Fatalf("GetLog(%d) = %+v, want %+v", i, got, *m[i])
		}
	}
	var x raft.Log
	if last != 0 {
		if err := l.GetLog(last+1, &x); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(last+1) = %v, want ErrLogNotFound", err)
		}
	}
	if first > 1 {
		if err := l.GetLog(first-1, &x); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(first-1) = %v, want ErrLogNotFound", err)
		}
	}
}

// appendRandom appends batches up to index upto, recording them in m.
func appendRandom(t *testing.T, r *rand.Rand, l *Log, m model, from, upto, term uint64) {
	t.Helper()
	for i := from; i <= upto; {
		n := min(uint64(1+r.IntN(40)), upto-i+1)
		batch := make([]*raft.Log, n)
		for k := range batch {
			batch[k] = mkLog(r, i+uint64(k), term)
			m[i+uint64(k)] = batch[k]
		}
		if err := l.StoreLogs(batch); err != nil {
			t.Fatalf("StoreLogs at %d: %v", i, err)
		}
		i += n
	}
}

func open(t *testing.T, dir string, opts Options) *Log {
	t.Helper()
	opts.Logf = t.Logf
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	sort.Strings(m)
	return m
}

func TestStoreGetReopen(t *testing.T) {
	for _, always := range []bool{false, true} {
		t.Run(fmt.Sprint("sync=", always), func(t *testing.T) {
			r := testutil.Rand(t, 0)
			dir := t.TempDir()
			opts := Options{SyncEveryBatch: always, SegmentSize: 8 << 10}
			l := open(t, dir, opts)
			checkLog(t, l, nil, 0, 0)
			m := model{}
			appendRandom(t, r, l, m, 1, 600, 1)
			checkLog(t, l, m, 1, 600)
			if len(segFiles(t, dir)) < 3 {
				t.Fatalf("expected several segments, got %v", segFiles(t, dir))
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			l.Close()
			if err := l.StoreLogs([]*raft.Log{mkLog(r, 601, 1)}); !errors.Is(err, ErrClosed) {
				t.Fatalf("StoreLogs after Close: %v", err)
			}
			l = open(t, dir, opts)
			checkLog(t, l, m, 1, 600)
			appendRandom(t, r, l, m, 601, 700, 2)
			checkLog(t, l, m, 1, 700)
		})
	}
}

func TestContiguity(t *testing.T) {
	r := testutil.Rand(t, 0)
	l := open(t, t.TempDir(), Options{})
	// An empty log accepts any first index (raft empties a monotonic store
	// before installing a snapshot, then appends after it).
	if err := l.StoreLogs([]*raft.Log{mkLog(r, 100, 1), mkLog(r, 101, 1)}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]uint64{{103}, {101}, {102, 104}, {0}} {
		var batch []*raft.Log
		for _, i := range bad {
			batch = append(batch, mkLog(r, i, 1))
		}
		if err := l.StoreLogs(batch); err == nil {
			t.Fatalf("StoreLogs(%v) after 101 succeeded", bad)
		}
	}
	if err := l.StoreLog(mkLog(r, 102, 1)); err != nil {
		t.Fatal(err)
	}
	if la, _ := l.LastIndex(); la != 102 {
		t.Fatalf("last = %d", la)
	}
}

func TestDeletePrefixSuffixAll(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	opts := Options{SegmentSize: 4 << 10}
	l := open(t, dir, opts)
	m := model{}
	appendRandom(t, r, l, m, 1, 500, 1)
	before := len(segFiles(t, dir))

	if err := l.DeleteRange(1, 300); err != nil {
		t.Fatal(err)
	}
	checkLog(t, l, m, 301, 500)
	if after := len(segFiles(t, dir)); after >= before {
		t.Fatalf("prefix deletion removed no segment: %d → %d", before, after)
	}

	// A follower's conflicting suffix, cut in the middle of a batch, then
	// replaced by entries of a newer term.
	if err := l.DeleteRange(423, 500); err != nil {
		t.Fatal(err)
	}
	checkLog(t, l, m, 301, 422)
	appendRandom(t, r, l, m, 423, 460, 2)
	checkLog(t, l, m, 301, 460)

	// Reopen: everything from the first kept segment is back (entries
	// below the logical first index may reappear), the suffix is gone.
	l.Close()
	l = open(t, dir, opts)
	f, _ := l.FirstIndex()
	if f > 301 {
		t.Fatalf("first after reopen = %d, want ≤ 301", f)
	}
	checkLog(t, l, m, f, 460)

	if err := l.DeleteRange(1, 2); err != nil { // below first: nothing
		t.Fatal(err)
	}
	if err := l.DeleteRange(f+5, f+10); err == nil {
		t.Fatal("deleting from the middle succeeded")
	}
	if err := l.DeleteRange(f, 460); err != nil {
		t.Fatal(err)
	}
	checkLog(t, l, m, 0, 0)
	if n := len(segFiles(t, dir)); n != 0 {
		t.Fatalf("%d segments left after deleting everything", n)
	}
	appendRandom(t, r, l, m, 10_000, 10_050, 5)
	l.Close()
	l = open(t, dir, opts)
	checkLog(t, l, m, 10_000, 10_050)
}

func TestDeleteSuffixWholeSegments(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	opts := Options{SegmentSize: 2 << 10}
	l := open(t, dir, opts)
	m := model{}
	appendRandom(t, r, l, m, 1, 300, 1)
	// Cut exactly at a segment's first entry.
	l.mu.RLock()
	base := l.segs[len(l.segs)/2].base
	l.mu.RUnlock()
	if err := l.DeleteRange(base, 300); err != nil {
		t.Fatal(err)
	}
	checkLog(t, l, m, 1, base-1)
	appendRandom(t, r, l, m, base, base+50, 3)
	l.Close()
	l = open(t, dir, opts)
	checkLog(t, l, m, 1, base+50)
}

// lastSegment returns the path and size of the newest segment file.
// TestConcurrentUse runs appends, reads, syncs and prefix deletions at
// once (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	r := testutil.Rand(t, 0)
	l := open(t, t.TempDir(), Options{SegmentSize: 16 << 10})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				f, _ := l.FirstIndex()
				la, _ := l.LastIndex()
				if la == 0 {
					continue
				}
				i := f + rr.Uint64N(la-f+1)
				var got raft.Log
				if err := l.GetLog(i, &got); err != nil && !errors.Is(err, raft.ErrLogNotFound) {
					errs <- err
					return
				} else if err == nil && got.Index != i {
					errs <- fmt.Errorf("GetLog(%d) returned %d", i, got.Index)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if err := l.Sync(); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	m := model{}
	for i := uint64(1); i <= 3000; i += 10 {
		appendRandom(t, r, l, m, i, i+9, 1)
		if i%500 == 1 && i > 1000 {
			if err := l.DeleteRange(1, i-500); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPrefixDeletionShrinksIndex: raft deletes a prefix after every
// snapshot; the index must shrink with it even inside one large segment.
func TestPrefixDeletionShrinksIndex(t *testing.T) {
	r := testutil.Rand(t, 0)
	l := open(t, t.TempDir(), Options{})
	m := model{}
	appendRandom(t, r, l, m, 1, 20_000, 1)
	if err := l.DeleteRange(1, 19_900); err != nil {
		t.Fatal(err)
	}
	l.mu.RLock()
	n, c := len(l.segs), cap(l.segs[0].offs)
	l.mu.RUnlock()
	if n != 1 || c > 1000 {
		t.Fatalf("after deleting 19,900 of 20,000 entries: %d segments, index capacity %d", n, c)
	}
	checkLog(t, l, m, 19_901, 20_000)
	appendRandom(t, r, l, m, 20_001, 20_100, 1)
	checkLog(t, l, m, 19_901, 20_100)
}
