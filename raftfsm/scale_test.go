package raftfsm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/internal/threadcpu"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
)

// TestSnapshotAtScale measures what a snapshot of a large state costs the
// log's applies while it is taken and persisted, and what writing and
// restoring it take. It applies a steady write load (64-entry batches of
// one-member ZADDs, one batch every 2 ms: 32,000 writes a second, as a
// cluster under load applies them) on the test goroutine, which plays
// raft's FSM goroutine: Snapshot runs there between two batches, and
// Persist runs on another goroutine while batches go on.
//
// By default it runs small (200,000 members) and checks correctness only.
// The figures of docs/operations.md ("Snapshots at scale") come from
//
//	GOBLIN_SCALE_MEMBERS=10000000 go test -run TestSnapshotAtScale -v -timeout 30m ./raftfsm/
//
// which also fails if a snapshot blocked applies for 10 ms or more.
// GOBLIN_SCALE_CASES picks cases by name (a comma-separated list, e.g.
// "int32/1,standard/1000").
func TestSnapshotAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large sets")
	}
	members, target := testutil.ScaleMembers(t, 200_000)
	type scaleCase struct {
		layout packed.Layout
		keys   int
	}
	cases := []scaleCase{
		{packed.Int32Float32, 1}, {packed.Standard, 1},
		{packed.Int32Float32, 1000}, {packed.Standard, 1000},
		{packed.Int32Float32, members / 10}, {packed.Standard, members / 10},
	}
	pick := map[string]bool{}
	if s := os.Getenv("GOBLIN_SCALE_CASES"); s != "" {
		for _, name := range splitComma(s) {
			pick[name] = true
		}
	}
	for _, sc := range cases {
		name := fmt.Sprintf("%s/%d", layoutName(sc.layout), sc.keys)
		if len(pick) > 0 && !pick[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			measureSnapshot(t, sc.layout, sc.keys, members, target)
		})
	}
}

func layoutName(l packed.Layout) string {
	if l == packed.Standard {
		return "standard"
	}
	return "int32"
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// scaleMember returns member i's text in layout l.
func scaleMember(l packed.Layout, i int) string {
	if l == packed.Standard {
		return "member:" + strconv.Itoa(i)
	}
	return strconv.Itoa(i)
}

// scaleKeyspace builds keys sets of members/keys members each, with
// integer scores (exact in FLOAT32) from r.
func scaleKeyspace(t *testing.T, l packed.Layout, keys, members int, r *rand.Rand) *keyspace.Keyspace {
	ks := keyspace.New()
	ks.SetRules(keyspace.Rules{{Pattern: "p:*", Layout: packed.Int32Float32}})
	per := members / keys
	for k := range keys {
		z := packed.New(l)
		for i := range per {
			if _, err := z.Add([]byte(scaleMember(l, i)), float64(r.IntN(1_000_000)), 0); err != nil {
				t.Fatal(err)
			}
		}
		ks.DB(0).Set([]byte(scaleKey(l, k)), &keyspace.Entry{Z: z}, 1)
	}
	return ks
}

func scaleKey(l packed.Layout, k int) string {
	if l == packed.Standard {
		return "s:" + strconv.Itoa(k)
	}
	return "p:" + strconv.Itoa(k)
}

// fileSink is a raft.SnapshotSink over a plain file.
type fileSink struct{ *os.File }

func (s fileSink) ID() string    { return s.Name() }
func (s fileSink) Cancel() error { return s.File.Close() }

// heapAfterGC collects garbage and returns the heap in use.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// liveHeap returns the heap the last garbage collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func measureSnapshot(t *testing.T, l packed.Layout, keys, members int, target bool) {
	r := testutil.Rand(t, 2)
	start := time.Now()
	f := New()
	f.applier.KS = scaleKeyspace(t, l, keys, members, r)
	t.Logf("built %d members in %d keys in %v", members, keys, time.Since(start).Round(time.Millisecond))

	// The write load: rescores of existing members (the member count
	// stays members, which the restore checks).
	const batch, tick = 64, 2 * time.Millisecond
	per := members / keys
	data := make([][]byte, 1<<14)
	for i := range data {
		c := NewCommand(0, "ZADD", scaleKey(l, r.IntN(keys)), strconv.Itoa(r.IntN(1_000_000)), scaleMember(l, r.IntN(per)))
		data[i] = commandEntry(1, c).Encode(nil)
	}
	logs := make([]*raft.Log, batch)
	for i := range logs {
		logs[i] = &raft.Log{Type: raft.LogCommand}
	}
	index := uint64(1)
	next := time.Now()
	var batchCPU time.Duration // the most CPU time a batch took, reset per phase
	applyBatch := func() time.Duration {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(tick)
		for _, lg := range logs {
			index++
			lg.Index, lg.Data = index, data[index%uint64(len(data))]
		}
		t0, c0 := time.Now(), threadcpu.Now()
		f.ApplyBatch(logs)
		batchCPU = max(batchCPU, time.Duration(threadcpu.Now()-c0))
		return time.Since(t0)
	}

	runtime.LockOSThread() // (so that threadCPU is this goroutine's)
	defer runtime.UnlockOSThread()
	var quiet time.Duration // the longest batch with no snapshot under way
	for range 250 {
		quiet = max(quiet, applyBatch())
	}

	live := heapAfterGC()
	dir := t.TempDir()
	file, err := os.Create(filepath.Join(dir, "snap"))
	if err != nil {
		t.Fatal(err)
	}
	next = time.Now()
	t0, c0 := time.Now(), threadcpu.Now()
	snap, err := f.Snapshot()
	pause, pauseCPU := time.Since(t0), time.Duration(threadcpu.Now()-c0)
	if err != nil {
		t.Fatal(err)
	}
	wantIndex := index
	var done atomic.Bool
	var writeTime time.Duration
	persistErr := make(chan error, 1)
	go func() {
		t0 := time.Now()
		err := snap.Persist(fileSink{file})
		writeTime = time.Since(t0)
		done.Store(true)
		persistErr <- err
	}()
	quietCPU := batchCPU
	batchCPU = 0
	var during time.Duration // the longest batch while Persist runs
	batches := 0
	peak := live
	for !done.Load() {
		during = max(during, applyBatch())
		batches++
		peak = max(peak, liveHeap())
	}
	if err := <-persistErr; err != nil {
		t.Fatal(err)
	}
	held := heapAfterGC() // the live state plus what the snapshot still holds
	snap.Release()
	runtime.KeepAlive(f) // (held counts the live state too)
	st, err := os.Stat(filepath.Join(dir, "snap"))
	if err != nil {
		t.Fatal(err)
	}

	g := New()
	rf, err := os.Open(filepath.Join(dir, "snap"))
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if err := g.Restore(rf); err != nil {
		t.Fatal(err)
	}
	restoreTime := time.Since(t0)
	if g.Applied() != wantIndex {
		t.Errorf("restored index %d, want %d", g.Applied(), wantIndex)
	}
	total, nkeys := 0, 0
	g.KS().DB(0).Each(0, func(_ string, e *keyspace.Entry) bool {
		total += e.Z.Len()
		nkeys++
		return true
	})
	if total != per*keys || nkeys != keys {
		t.Errorf("restored %d members in %d keys, want %d in %d", total, nkeys, per*keys, keys)
	}
	t.Logf("%s, %d members in %d keys: snapshot pause %v (%v of CPU); longest apply batch %v (most CPU %v) while persisting (%d batches), %v (%v) without a snapshot; "+
		"persist %v, %.1f MB; restore %v; live heap %.0f MB, peak live heap while persisting %.2fx, after persisting with the snapshot held %.2fx",
		l, per*keys, keys, pause.Round(10*time.Microsecond), pauseCPU.Round(10*time.Microsecond), during.Round(10*time.Microsecond), batchCPU.Round(10*time.Microsecond), batches, quiet.Round(10*time.Microsecond), quietCPU.Round(10*time.Microsecond),
		writeTime.Round(time.Millisecond), float64(st.Size())/1e6, restoreTime.Round(time.Millisecond),
		float64(live)/1e6, float64(peak)/float64(live), float64(held)/float64(live))
	if target && pause >= 10*time.Millisecond {
		t.Errorf("the snapshot blocked applies for %v, over 10 ms", pause)
	}
}
