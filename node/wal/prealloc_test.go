package wal

import (
	"errors"
	"os"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// quietOpen opens d and fails the test if Open repairs anything: a log
// whose tail is preallocated zeros needs no repair.
func quietOpen(t *testing.T, d string, opts Options) *Log {
	t.Helper()
	opts.Logf = func(format string, args ...any) { t.Errorf("unexpected repair: "+format, args...) }
	l, err := Open(d, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestPreallocate appends across several segments with preallocation:
// the active segment's file runs ahead of its content, sealed segments
// are cut to theirs, and the files as a crash leaves them at any point
// (zeros after the content) and after a clean close reopen without a
// repair, holding every entry, and take appends again.
func TestPreallocate(t *testing.T) {
	r := testutil.Rand(t, 0)
	opts := Options{Preallocate: true, SegmentSize: 1536 << 10}
	dir := t.TempDir()
	l := quietOpen(t, dir, opts)
	m := model{}
	var last uint64
	for round := range 6 {
		appendRandom(t, r, l, m, last+1, last+6000, 1)
		last += 6000
		if round%2 == 0 {
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		s := l.segs[len(l.segs)-1]
		if size := fileSize(t, s.path); size <= s.size || size != s.alloc {
			t.Fatalf("round %d: active segment is %d bytes long, content %d, alloc %d: not preallocated", round, size, s.size, s.alloc)
		}
		for _, s := range l.segs[:len(l.segs)-1] {
			if size := fileSize(t, s.path); size != s.size {
				t.Fatalf("round %d: sealed segment %s is %d bytes long, content %d", round, s.path, size, s.size)
			}
		}
		crash := copyDir(t, dir)
		c := quietOpen(t, crash, opts)
		checkLog(t, c, m, 1, last)
		c.Close()
	}
	if len(l.segs) < 3 {
		t.Fatalf("%d segments: the test should cross segments", len(l.segs))
	}
	l.Close()
	l = quietOpen(t, dir, opts)
	checkLog(t, l, m, 1, last)
	appendRandom(t, r, l, m, last+1, last+100, 2)
	checkLog(t, l, m, 1, last+100)
	s := l.segs[len(l.segs)-1]
	if fileSize(t, s.path) != s.alloc || s.alloc <= s.size {
		t.Fatalf("after reopening, the zeros are not reused: file %d, content %d, alloc %d", fileSize(t, s.path), s.size, s.alloc)
	}
}

// TestPreallocatedTornWrite: in a preallocated segment, a final write a
// crash left half done (garbage then zeros) is cut as torn; zeros where a
// synced batch was are corruption, not the end of the log.
func TestPreallocatedTornWrite(t *testing.T) {
	r := testutil.Rand(t, 0)
	opts := Options{Preallocate: true, SyncEveryBatch: true}
	dir := t.TempDir()
	l := open(t, dir, opts)
	m := model{}
	appendRandom(t, r, l, m, 1, 300, 1)
	s := l.segs[len(l.segs)-1]
	before := s.size
	appendRandom(t, r, l, m, 301, 301, 1)
	after := s.size
	l.markNow() // as markDelay after it

	torn := copyDir(t, dir)
	f, err := os.OpenFile(segFiles(t, torn)[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, after)
	f.Close()
	var repairs []string
	lt, err := Open(torn, Options{Preallocate: true, Logf: func(format string, args ...any) { repairs = append(repairs, format) }})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, lt, m, 1, 301)
	lt.Close()
	if len(repairs) != 1 {
		t.Fatalf("repairs %q, want the torn write cut", repairs)
	}

	gone := copyDir(t, dir)
	f, err = os.OpenFile(segFiles(t, gone)[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(make([]byte, after-before), before)
	f.Close()
	wantCorrupt(t, gone, "synced")
}

// TestPreallocationFailure: when the zeros cannot be written (a full
// disk), appends go on as without preallocation.
func TestPreallocationFailure(t *testing.T) {
	r := testutil.Rand(t, 0)
	full := errors.New("no space left on device")
	opts := Options{Preallocate: true, Inject: func(op Op) error {
		if op == OpPrealloc {
			return full
		}
		return nil
	}}
	dir := t.TempDir()
	l := open(t, dir, opts)
	m := model{}
	appendRandom(t, r, l, m, 1, 500, 1)
	s := l.segs[len(l.segs)-1]
	if size := fileSize(t, s.path); size != s.size {
		t.Fatalf("file %d bytes, content %d", size, s.size)
	}
	l.Close()
	l = quietOpen(t, dir, Options{Preallocate: true})
	checkLog(t, l, m, 1, 500)
}
