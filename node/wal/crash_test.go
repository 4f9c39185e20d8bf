package wal

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestKilledWriter kills a real process that appends to a log, with
// kill -9 at random moments, again and again, and checks after each kill
// that the log holds every entry the process was told was stored, byte
// for byte: entries of a few bytes and of over 1 MiB, batches that cross
// segment boundaries, the tail cut back (as Raft does on a follower whose
// log conflicts with the leader's) and the head removed (compaction), with
// and without preallocation (whose appends are copies into a mapping).
// The writer reports each step on stdout once the log returned from it,
// a line ending in " ." (a line cut by the kill does not);
// whatever it did after its last report may or may not be there.
func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes; skipped in -short mode")
	}
	for _, prealloc := range []bool{true, false} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) {
			rng := testutil.Rand(t, 1)
			dir := t.TempDir()
			model := &crashModel{entries: map[uint64]entryID{}, below: map[uint64]entryID{}}
			for round := range 12 {
				lines := runKilledWriter(t, dir, prealloc, rng.Uint64(), time.Duration(20+rng.IntN(400))*time.Millisecond)
				for _, line := range lines {
					model.apply(t, line)
				}
				model.check(t, dir, round)
			}
			t.Logf("%d entries stored and checked in the last log, %d steps reported", model.last-model.first+1, model.steps)
		})
	}
}

// entryID says which bytes an entry holds: they are made from the index,
// a generation (an index written again after the tail was cut holds
// other bytes) and the size.
type entryID struct{ gen, size uint64 }

func crashEntryData(index uint64, id entryID) []byte {
	b := make([]byte, id.size)
	r := rand.New(rand.NewPCG(index, id.gen))
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// crashModel is what the writer reported: the entries stored, by index,
// and a cut it began and did not report done (the kill came during it).
// The entries a head removal deleted are kept aside (below): after a
// restart the log's first index is its first segment's base, so some of
// them may be there again (doc.go, Deletion), and the writer's next head
// removal may start from one of them.
type crashModel struct {
	first, last uint64
	entries     map[uint64]entryID
	below       map[uint64]entryID
	steps       int
	cutting     string // "t" or "h", or ""
	cutAt       uint64
}

// apply takes one reported step: "A index gen size" (an entry stored, a
// line per entry once its batch returned), "t min" then "T min" (the tail
// from min being cut, then cut), "h max" then "H max" (the head up to max
// being removed, then removed).
func (m *crashModel) apply(t *testing.T, line string) {
	f := strings.Fields(line)
	num := func(i int) uint64 {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			t.Fatalf("the writer reported %q", line)
		}
		return v
	}
	m.steps++
	switch f[0] {
	case "t", "h":
		m.cutting, m.cutAt = f[0], num(1)
		return
	}
	m.cutting = ""
	switch f[0] {
	case "A":
		i := num(1)
		m.entries[i] = entryID{gen: num(2), size: num(3)}
		if m.first == 0 {
			m.first = i
		}
		m.last = i
	case "T":
		for i := num(1); i <= m.last; i++ {
			delete(m.entries, i)
			delete(m.below, i)
		}
		m.last = num(1) - 1
	case "H":
		for i := m.first; i <= num(1); i++ {
			if id, ok := m.entries[i]; ok {
				m.below[i] = id
			}
			delete(m.entries, i)
		}
		// A removal from a first index that came back after a restart
		// may end below the first entry kept.
		m.first = max(m.first, num(1)+1)
	default:
		t.Fatalf("the writer reported %q", line)
	}
}

// check opens the log as the next start would and compares it with what
// was reported.
func (m *crashModel) check(t *testing.T, dir string, round int) {
	t.Helper()
	l, err := Open(dir, Options{SyncEveryBatch: true})
	if err != nil {
		t.Fatalf("round %d: opening the log after kill -9: %v", round, err)
	}
	defer l.Close()
	first, _ := l.FirstIndex()
	last, _ := l.LastIndex()
	// A cut the kill interrupted may have taken effect, in part or whole.
	switch m.cutting {
	case "t":
		if last >= m.cutAt-1 && last < m.last {
			m.apply(t, fmt.Sprintf("T %d", last+1))
		}
	case "h":
		if first > m.first && first <= m.cutAt+1 {
			m.apply(t, fmt.Sprintf("H %d", first-1))
		}
	}
	m.cutting = ""
	if m.last >= m.first && m.last > 0 && (last < m.last || first > m.first) {
		t.Fatalf("round %d: the log holds %d..%d, but %d..%d were stored", round, first, last, m.first, m.last)
	}
	// Entries below the first one kept, back after the restart, read
	// back as they were stored.
	for i := first; i < m.first && i <= last && first > 0; i++ {
		var e raft.Log
		if err := l.GetLog(i, &e); err != nil {
			t.Fatalf("round %d: entry %d, below the first kept, is in the log's bounds but reads back: %v", round, i, err)
		}
		if id, ok := m.below[i]; ok && (e.Term != id.gen || !bytes.Equal(e.Data, crashEntryData(i, id))) {
			t.Fatalf("round %d: entry %d, below the first kept, holds other bytes than were stored", round, i)
		}
	}
	for i := m.first; i <= m.last && m.last > 0; i++ {
		id, ok := m.entries[i]
		if !ok {
			t.Fatalf("round %d: the model has no entry %d", round, i)
		}
		var e raft.Log
		if err := l.GetLog(i, &e); err != nil {
			t.Fatalf("round %d: entry %d, stored before the kill: %v", round, i, err)
		}
		if e.Index != i || e.Term != id.gen || !bytes.Equal(e.Data, crashEntryData(i, id)) {
			t.Fatalf("round %d: entry %d holds other bytes than were stored (term %d, %d bytes; want term %d, %d bytes)", round, i, e.Term, len(e.Data), id.gen, id.size)
		}
	}
	// What is past the last reported entry was written by a step the
	// kill interrupted: it stays (the writer goes on from it) only if
	// it reads back whole.
	for i := m.last + 1; i <= last; i++ {
		var e raft.Log
		if err := l.GetLog(i, &e); err != nil {
			t.Fatalf("round %d: entry %d past the reported ones: %v", round, i, err)
		}
		id := entryID{gen: e.Term, size: uint64(len(e.Data))}
		if !bytes.Equal(e.Data, crashEntryData(i, id)) {
			t.Fatalf("round %d: entry %d past the reported ones holds other bytes than were written", round, i)
		}
		m.entries[i] = id
		m.last = i
		if m.first == 0 {
			m.first = i
		}
	}
}

// runKilledWriter starts the writer on dir and kills it with SIGKILL after
// d, returning the steps it reported.
func runKilledWriter(t *testing.T, dir string, prealloc bool, seed uint64, d time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterChild$")
	cmd.Env = append(os.Environ(), "WAL_CRASH_DIR="+dir, "WAL_CRASH_SEED="+strconv.FormatUint(seed, 10), "WAL_CRASH_PREALLOC="+strconv.FormatBool(prealloc))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the writer ended before it was killed (%v): %s", err, stderr.String())
	}
	// The last line may have been cut by the kill: each ends in " .".
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], " .") {
		lines = lines[:n-1]
	}
	for i, line := range lines {
		lines[i] = strings.TrimSuffix(line, " .")
	}
	return lines
}

// TestKilledWriterChild is the writer TestKilledWriter kills: it appends,
// cuts and compacts until killed, reporting each step once done.
func TestKilledWriterChild(t *testing.T) {
	dir := os.Getenv("WAL_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestKilledWriter")
	}
	seed, _ := strconv.ParseUint(os.Getenv("WAL_CRASH_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 2))
	l, err := Open(dir, Options{SyncEveryBatch: true, SegmentSize: 4 << 20, Preallocate: os.Getenv("WAL_CRASH_PREALLOC") == "true"})
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	report := func(format string, args ...any) {
		fmt.Fprintf(w, format+" .\n", args...)
		w.Flush()
	}
	for {
		first, _ := l.FirstIndex()
		last, _ := l.LastIndex()
		switch k := rng.IntN(20); {
		case k == 0 && last > first+10:
			// A follower's conflicting tail.
			min := last - uint64(rng.IntN(10))
			report("t %d", min)
			if err := l.DeleteRange(min, last); err != nil {
				t.Fatal(err)
			}
			report("T %d", min)
		case k == 1 && last > first+200:
			max := first + uint64(rng.IntN(int(last-first)/2))
			report("h %d", max)
			if err := l.DeleteRange(first, max); err != nil {
				t.Fatal(err)
			}
			report("H %d", max)
		default:
			n := 1 + rng.IntN(16)
			batch := make([]*raft.Log, n)
			ids := make([]entryID, n)
			for i := range batch {
				size := uint64(rng.IntN(200))
				switch rng.IntN(10) {
				case 0:
					size = 1<<20 + uint64(rng.IntN(300<<10))
				case 1:
					size = uint64(rng.IntN(64 << 10))
				}
				ids[i] = entryID{gen: 1 + rng.Uint64N(1<<40), size: size &^ 7}
				index := last + 1 + uint64(i)
				batch[i] = &raft.Log{Index: index, Term: ids[i].gen, Type: raft.LogCommand, Data: crashEntryData(index, ids[i])}
			}
			if err := l.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
			for i, e := range batch {
				report("A %d %d %d", e.Index, ids[i].gen, ids[i].size)
			}
		}
	}
}
