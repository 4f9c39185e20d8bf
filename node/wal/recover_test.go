package wal

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/raft"
)

// copyDir copies a log directory's files. Taken while the log is open, it
// is what a crash (kill -9) would leave: the files as the kernel has them.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func lastSegment(t *testing.T, dir string) (string, int64) {
	t.Helper()
	f := segFiles(t, dir)
	st, err := os.Stat(f[len(f)-1])
	if err != nil {
		t.Fatal(err)
	}
	return f[len(f)-1], st.Size()
}

// finalWrite is a log with entries 1..120 synced, then a final batch of
// 121..123: pre is the directory as it was before the final batch,
// post as it is after it was synced. The final batch occupies
// [before, after) in the last segment, named name.
type finalWrite struct {
	m             model
	pre, post     string
	name          string
	before, after int64
}

// newFinalWrite builds a finalWrite whose final batch carries data (nil:
// random entries) in its entries.
func newFinalWrite(t *testing.T, r *rand.Rand, data []byte, middle []byte) *finalWrite {
	t.Helper()
	dir := t.TempDir()
	l := open(t, dir, Options{SyncEveryBatch: true})
	fw := &finalWrite{m: model{}}
	appendRandom(t, r, l, fw.m, 1, 60, 1)
	if middle != nil {
		e := &raft.Log{Index: 61, Term: 1, Type: raft.LogCommand, Data: middle}
		fw.m[61] = e
		if err := l.StoreLog(e); err != nil {
			t.Fatal(err)
		}
	}
	appendRandom(t, r, l, fw.m, uint64(len(fw.m))+1, 120, 1)
	fw.pre = copyDir(t, dir)
	var path string
	path, fw.before = lastSegment(t, dir)
	fw.name = filepath.Base(path)
	batch := []*raft.Log{mkLog(r, 121, 1), mkLog(r, 122, 1), mkLog(r, 123, 1)}
	for _, e := range batch {
		fw.m[e.Index] = e
	}
	if data != nil {
		batch[1].Data = data
	}
	if err := l.StoreLogs(batch); err != nil {
		t.Fatal(err)
	}
	l.markNow() // as markDelay after it
	fw.post = copyDir(t, dir)
	_, fw.after = lastSegment(t, dir)
	return fw
}

// torn returns a copy of pre whose last segment continues with b: a crash
// in the middle of the final write, whose bytes were b when it stopped.
func (fw *finalWrite) torn(t *testing.T, b []byte) string {
	t.Helper()
	d := copyDir(t, fw.pre)
	f, err := os.OpenFile(filepath.Join(d, fw.name), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, fw.before); err != nil {
		t.Fatal(err)
	}
	return d
}

// finalBytes returns the final batch's bytes as written.
func (fw *finalWrite) finalBytes(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fw.post, fw.name))
	if err != nil {
		t.Fatal(err)
	}
	return b[fw.before:fw.after]
}

// checkRecovers opens d and checks it holds exactly entries 1..want, then
// (every few calls: it costs fsyncs) that an append after them survives a
// reopen.
func checkRecovers(t *testing.T, r *rand.Rand, d string, m model, want uint64) {
	t.Helper()
	l, err := Open(d, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	checkLog(t, l, m, 1, want)
	if r.IntN(8) != 0 {
		l.Close()
		return
	}
	next := mkLog(r, want+1, 2)
	if err := l.StoreLog(next); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, d, Options{})
	var got raft.Log
	if err := l.GetLog(want+1, &got); err != nil || !sameLog(&got, next) {
		t.Fatalf("entry appended after repair: %v", err)
	}
	l.Close()
}

func wantCorrupt(t *testing.T, d string, mention string) {
	t.Helper()
	l, err := Open(d, Options{})
	if err == nil {
		l.Close()
		t.Fatalf("Open succeeded on a corrupt log")
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), mention) {
		t.Fatalf("Open: %v, want ErrCorrupt mentioning %q", err, mention)
	}
}

// sectors calls fn with each 512-byte sector of the file that overlaps
// [from, to), clipped to it: the unit a disk writes atomically, so the
// unit in which a torn write leaves old bytes or zeros.
func sectors(from, to int64, fn func(lo, hi int64)) {
	for lo := from; lo < to; {
		hi := min((lo/512+1)*512, to)
		fn(lo, hi)
		lo = hi
	}
}

// zeroSectors checks a crash that left one sector of the final write as
// zeros (the rest of final written): Open drops the torn batch, unless
// that part of the batch was zeros already, so that the write is whole.
func (fw *finalWrite) zeroSectors(t *testing.T, r *rand.Rand, final []byte) {
	t.Helper()
	sectors(fw.before, fw.after, func(lo, hi int64) {
		b := bytes.Clone(final)
		s := b[lo-fw.before : hi-fw.before]
		want := uint64(120)
		if bytes.Count(s, []byte{0}) == len(s) {
			want = 123
		}
		clear(s)
		checkRecovers(t, r, fw.torn(t, b), fw.m, want)
	})
}

// TestTornFinalWrite cuts the final write at every byte, zeroes each of
// its sectors, and overwrites it with garbage: Open keeps every earlier
// entry, drops the torn batch, and appends after.
func TestTornFinalWrite(t *testing.T) {
	r := testutil.Rand(t, 0)
	fw := newFinalWrite(t, r, bytes.Repeat([]byte{7}, 60), nil)
	final := fw.finalBytes(t)
	for cut := range len(final) {
		checkRecovers(t, r, fw.torn(t, final[:cut]), fw.m, 120)
	}
	fw.zeroSectors(t, r, final)
	checkRecovers(t, r, fw.torn(t, bytes.Repeat([]byte{0xff}, len(final)+100)), fw.m, 120)
	// Zeros after a complete log (a torn write that left only zeros, or
	// preallocation) end the log, and the synced log is kept whole.
	f, _ := os.OpenFile(filepath.Join(fw.post, fw.name), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(make([]byte, 4096))
	f.Close()
	checkRecovers(t, r, fw.post, fw.m, 123)
}

// craftedMember returns client data that holds complete, valid batches of
// both formats, continuing the log from index next: what a ZADD member
// can contain.
func craftedMember(next uint64) []byte {
	var b []byte
	for k := range 2 {
		logs := []*raft.Log{{Index: next + uint64(k), Term: 1, Type: raft.LogCommand, Data: []byte("planted")}}
		b, _ = appendBatch(b, logs, 0xfffffff0, nil) // claims a huge synced offset
		hdr1 := make([]byte, batchHdrLenV1)
		putBatchHeader(hdr1, v1, uint32(len(b)-batchHdrLenV2), 1, 0)
		b = append(b, hdr1...)
		b = append(b, b[batchHdrLenV2:len(b)-batchHdrLenV1]...)
	}
	return b
}

// TestMemberLooksLikeBatch: entries whose data holds valid-looking
// batches, in the torn final write or in a synced batch before it, never
// make Open fail or keep anything that was not written as a batch.
func TestMemberLooksLikeBatch(t *testing.T) {
	r := testutil.Rand(t, 0)
	for _, where := range []string{"final", "middle"} {
		t.Run(where, func(t *testing.T) {
			var fw *finalWrite
			if where == "final" {
				fw = newFinalWrite(t, r, craftedMember(122), nil)
			} else {
				fw = newFinalWrite(t, r, nil, craftedMember(62))
			}
			final := fw.finalBytes(t)
			for cut := range len(final) {
				checkRecovers(t, r, fw.torn(t, final[:cut]), fw.m, 120)
			}
			fw.zeroSectors(t, r, final)
			checkRecovers(t, r, fw.post, fw.m, 123)
		})
	}
}

// TestBitFlips: a flipped bit in a synced batch, the final one included,
// is corruption; in batches written but never synced (everysec, then a
// power loss) it is a torn tail, cut.
func TestBitFlips(t *testing.T) {
	r := testutil.Rand(t, 0)
	fw := newFinalWrite(t, r, nil, nil)
	flip := func(src string, at int64) string {
		d := copyDir(t, src)
		p := filepath.Join(d, fw.name)
		b, _ := os.ReadFile(p)
		b[at] ^= 0x10
		os.WriteFile(p, b, 0o644)
		return d
	}
	t.Run("synced final batch", func(t *testing.T) {
		for at := fw.before; at < fw.after; at++ {
			wantCorrupt(t, flip(fw.post, at), "synced")
		}
	})
	t.Run("synced earlier batches", func(t *testing.T) {
		for at := int64(segHeaderLenV2); at < fw.before; at += 1 + int64(r.IntN(40)) {
			wantCorrupt(t, flip(fw.post, at), "segment")
		}
	})
	t.Run("sync mark", func(t *testing.T) {
		// Only the mark is damaged: nothing is lost, Open warns.
		for at := int64(markOff); at < markOff+12; at++ {
			checkRecovers(t, r, flip(fw.post, at), fw.m, 123)
		}
	})

	t.Run("sync mark and a batch", func(t *testing.T) {
		// The mark no longer tells what was synced: damage after it may
		// be in acknowledged batches, so it is not cut as a torn write.
		for _, at := range []int64{segHeaderLenV2, segHeaderLenV2 + 3, fw.before, fw.before + 5} {
			d := flip(flip(fw.post, markOff+2), at)
			before, _ := os.ReadFile(filepath.Join(d, fw.name))
			wantCorrupt(t, d, "sync mark")
			if after, _ := os.ReadFile(filepath.Join(d, fw.name)); !bytes.Equal(before, after) {
				t.Fatalf("flip at %d: the refused segment was changed", at)
			}
		}
	})

	// everysec: appended, never synced; the files as a crash leaves them.
	dir := t.TempDir()
	l := open(t, dir, Options{})
	m := model{}
	appendRandom(t, r, l, m, 1, 60, 1)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	_, synced := lastSegment(t, dir)
	appendRandom(t, r, l, m, 61, 120, 1)
	_, end := lastSegment(t, dir)
	crashed := copyDir(t, dir)
	name := filepath.Base(segFiles(t, dir)[0])
	fw.name = name
	t.Run("unsynced batches", func(t *testing.T) {
		for at := synced; at < end; at += 1 + int64(r.IntN(30)) {
			d := flip(crashed, at)
			l, err := Open(d, Options{})
			if err != nil {
				t.Fatalf("flip at %d (unsynced from %d): %v", at, synced, err)
			}
			la, _ := l.LastIndex()
			l.Close()
			if la < 60 || la >= 120 {
				t.Fatalf("flip at %d: recovered up to %d, want [60, 120)", at, la)
			}
			l = open(t, d, Options{})
			checkLog(t, l, m, 1, la)
			l.Close()
		}
	})
	t.Run("synced batches under everysec", func(t *testing.T) {
		for at := int64(segHeaderLenV2); at < synced; at += 1 + int64(r.IntN(30)) {
			wantCorrupt(t, flip(crashed, at), "segment")
		}
	})
}

// TestMissingSegment: the manifest makes a missing last segment an error,
// whether it was the only one or followed others.
func TestMissingSegment(t *testing.T) {
	r := testutil.Rand(t, 0)
	for _, size := range []int64{DefaultSegmentSize, 4 << 10} {
		dir := t.TempDir()
		l := open(t, dir, Options{SegmentSize: size})
		appendRandom(t, r, l, model{}, 1, 300, 1)
		l.Close()
		files := segFiles(t, dir)
		d := copyDir(t, dir)
		os.Remove(filepath.Join(d, filepath.Base(files[len(files)-1])))
		wantCorrupt(t, d, "missing")
		if len(files) > 2 {
			d := copyDir(t, dir)
			os.Remove(filepath.Join(d, filepath.Base(files[1])))
			wantCorrupt(t, d, "does not follow")
		}
	}
}

// TestCreateCrash: a crash while a segment was being created leaves an
// empty or partial file the manifest does not record; Open removes it.
func TestCreateCrash(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	l := open(t, dir, Options{SegmentSize: 4 << 10})
	m := model{}
	appendRandom(t, r, l, m, 1, 300, 1)
	l.Close()
	for _, partial := range [][]byte{nil, []byte("GOBLW"), segmentHeader(301)[:20]} {
		d := copyDir(t, dir)
		os.WriteFile(filepath.Join(d, segmentName(301)), partial, 0o644)
		checkRecovers(t, r, d, m, 300)
	}
	// A whole header of a recorded segment that went bad is corruption.
	d := copyDir(t, dir)
	files := segFiles(t, d)
	os.WriteFile(files[len(files)-1], []byte("GOBLW"), 0o644)
	wantCorrupt(t, d, "bad header")
}

// TestDamagedManifest is refused with the way out in the message; without
// a manifest (a log of an earlier version) Open records one.
func TestDamagedManifest(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	l := open(t, dir, Options{})
	m := model{}
	appendRandom(t, r, l, m, 1, 50, 1)
	l.Close()
	p := filepath.Join(dir, manifestName)
	b, _ := os.ReadFile(p)
	b[9] ^= 1
	os.WriteFile(p, b, 0o644)
	wantCorrupt(t, dir, "remove it")
	os.Remove(p)
	checkRecovers(t, r, dir, m, 50)
	if _, ok, err := readManifest(dir); !ok || err != nil {
		t.Fatalf("no manifest recorded: %v", err)
	}
}

// FuzzRecover damages a log whose final batch was being written when a
// crash came (its sync not recorded): the file is cut, a span
// overwritten, bytes appended. Open must recover an exact prefix (never
// inventing entries) that keeps every synced entry when the damage stays
// inside the final write, fail with ErrCorrupt when it reaches synced
// bytes (the sync mark aside; with the mark damaged too, damage to the
// final write is refused), and accept appends after what it kept.
func FuzzRecover(f *testing.F) {
	f.Add(uint16(0), uint16(0), []byte{}, uint16(0))
	f.Add(uint16(100), uint16(5), []byte{0xff}, uint16(0))
	f.Add(uint16(0), uint16(0), []byte{0, 0, 0, 0}, uint16(1))
	f.Add(uint16(30), uint16(40), []byte("GWB2garbage"), uint16(3))
	f.Fuzz(func(t *testing.T, at, cut uint16, patch []byte, extra uint16) {
		dir := t.TempDir()
		l, err := Open(dir, Options{SyncEveryBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		m := model{}
		var pre []byte
		var name string
		for i := uint64(1); i <= 30; i += 3 {
			if i == 28 {
				l.markNow() // as markDelay after batch 25-27: the mark says 27
				files := segFiles(t, dir)
				name = files[len(files)-1]
				pre, _ = os.ReadFile(name)
			}
			batch := []*raft.Log{mkLog(r, i, 1), mkLog(r, i+1, 1), mkLog(r, i+2, 1)}
			for _, e := range batch {
				m[e.Index] = e
			}
			if err := l.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
		}
		post, _ := os.ReadFile(name)
		l.Close()
		finalStart := len(pre)
		b := append(bytes.Clone(pre), post[finalStart:]...) // the mark still says 27
		if n := int(cut) % (len(b) + 1); cut != 0 {
			b = b[:len(b)-n%len(b)]
		}
		if len(b) > 0 && len(patch) > 0 {
			copy(b[int(at)%len(b):], patch)
		}
		b = append(b, make([]byte, int(extra)%64)...)
		os.WriteFile(name, b, 0o644)
		// Damage to synced bytes, other than the sync mark alone.
		syncedHit := len(b) < finalStart
		markHit := false
		for i := range min(len(b), finalStart) {
			if b[i] != pre[i] {
				if i >= markOff && i < markOff+markLen {
					markHit = true
				} else {
					syncedHit = true
				}
			}
		}

		l, err = Open(dir, Options{})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want nil or ErrCorrupt", err)
			}
			if !syncedHit && !markHit {
				// A damaged mark no longer tells what was synced, so
				// damage after the last intact batch is refused then.
				t.Fatalf("Open failed, but only the final write was damaged: %v", err)
			}
			return
		}
		defer l.Close()
		if syncedHit && !markHit {
			t.Fatalf("Open succeeded on damaged synced bytes")
		}
		first, _ := l.FirstIndex()
		last, _ := l.LastIndex()
		if last > 30 || (last > 0 && first != 1) {
			t.Fatalf("recovered [%d, %d] from a log of [1, 30]", first, last)
		}
		if !syncedHit && last < 27 {
			t.Fatalf("recovered up to %d: synced entries were dropped", last)
		}
		for i := first; i <= last && last > 0; i++ {
			var got raft.Log
			if err := l.GetLog(i, &got); err != nil || !sameLog(&got, m[i]) {
				t.Fatalf("entry %d after recovery: %v", i, err)
			}
		}
		next := &raft.Log{Index: last + 1, Term: 2, Data: []byte("after")}
		if last == 0 {
			next.Index = 1
		}
		if err := l.StoreLog(next); err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
	})
}

// A named pipe in place of the manifest or a segment is refused: reading
// it would wait forever.
func TestNotRegularFiles(t *testing.T) {
	r := testutil.Rand(t, 0)
	for _, target := range []string{manifestName, ""} {
		dir := t.TempDir()
		l := open(t, dir, Options{})
		appendRandom(t, r, l, model{}, 1, 20, 1)
		l.Close()
		p := filepath.Join(dir, target)
		if target == "" {
			p = segFiles(t, dir)[0]
		}
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			l, err := Open(dir, Options{})
			if err == nil {
				l.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("%s a named pipe: Open: %v", filepath.Base(p), err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s a named pipe: Open still waiting after 10 s", filepath.Base(p))
		}
	}
}
