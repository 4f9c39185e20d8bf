package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node/wal"
)

// diskFaults plays a failing disk under the wal (Config.logInject).
type diskFaults struct {
	mu   sync.Mutex
	fail map[wal.Op]error
}

func (d *diskFaults) set(op wal.Op, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail == nil {
		d.fail = map[wal.Op]error{}
	}
	if err == nil {
		delete(d.fail, op)
	} else {
		d.fail[op] = err
	}
}

func (d *diskFaults) inject(op wal.Op) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fail[op]
}

// startFaulty starts a single-voter node and waits until it serves.
func startFaulty(t *testing.T, dir string, store LogStore, fsync Fsync, inject func(wal.Op) error) *Node {
	t.Helper()
	_, trans := raft.NewInmemTransport("")
	n, err := New(Config{
		ID: "n1", DataDir: dir, Fsync: fsync, LogStore: store, Bootstrap: true, Transport: trans,
		SnapshotThreshold: 64, HeartbeatTimeout: 50 * time.Millisecond, ElectionTimeout: 50 * time.Millisecond,
		Logger:    hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
		logInject: inject,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	testutil.Poll(t, 10*time.Second, "a ready leader", n.Ready)
	return n
}

func addK(n *Node, member string, score int) error {
	_, err := n.Apply(zaddEntry("k", member, score))
	return err
}

// writer applies writes one after another in the background, recording
// the acknowledged ones, until stopped or a write fails.
type writer struct {
	mu    sync.Mutex
	acked []string
	err   error
	done  chan struct{}
	stop  chan struct{}
}

func startWriter(n *Node) *writer {
	w := &writer{done: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			m := fmt.Sprint("w", i)
			err := addK(n, m, i)
			w.mu.Lock()
			if err != nil {
				w.err = err
				w.mu.Unlock()
				return
			}
			w.acked = append(w.acked, m)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *writer) result() ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...), w.err
}

// checkHeld checks n is a leader holding a failed append: it keeps its
// term while the append is retried, serves reads, and refuses other
// writes with the log error.
func checkHeld(t *testing.T, n *Node, want error, readMember string) {
	t.Helper()
	testutil.Poll(t, 10*time.Second, "the log fault", func() bool { return n.LogFault() != nil })
	term := n.currentTerm()
	retries := n.stores.guard.heldRetries.Load()
	testutil.Poll(t, 20*time.Second, "two retries of the held append", func() bool { return n.stores.guard.heldRetries.Load() >= retries+2 })
	if !n.IsLeader() || n.currentTerm() != term {
		t.Fatalf("leader %v, term %d → %d: the node stepped down while holding", n.IsLeader(), term, n.currentTerm())
	}
	err := addK(n, "refused", 1)
	var lw *LogWriteError
	if !errors.Is(err, ErrLogWrite) || !errors.As(err, &lw) || !errors.Is(err, want) {
		t.Fatalf("write while the log fails: %v, want ErrLogWrite (%v)", err, want)
	}
	t.Logf("refused with reason %q", lw.Reason())
	// A single voter's reads are linearizable as usual; in a cluster,
	// confirming leadership waits for raft's main loop, which the held
	// append occupies, so reads there are READONLY reads.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.ReadBarrier(ctx, !n.singleVoter.Load()); err != nil {
		t.Fatalf("read while the log fails: %v", err)
	}
	if score(n, "k", readMember) == "" {
		t.Fatalf("acknowledged member %s not read", readMember)
	}
	st := n.Status()
	if st.LogWriteErr == nil || st.LogWriteErrSince.IsZero() {
		t.Fatalf("status shows no log error: %+v", st.LogWriteErr)
	}
}

// checkAll checks every member is in n's state.
func checkAll(t *testing.T, n *Node, members []string) {
	t.Helper()
	for _, m := range members {
		if score(n, "k", m) == "" {
			t.Fatalf("acknowledged member %s is missing", m)
		}
	}
}

// TestSingleNodeFullDisk fills the file system the data directory is on
// (a tmpfs): the node stays leader, serves reads, refuses writes with
// ENOSPC (MISCONF to clients), and once space is freed the write it held
// is stored and writes resume, with nothing acknowledged lost across a
// restart. Both log stores, both fsync modes.
func TestSingleNodeFullDisk(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		for _, fsync := range []Fsync{FsyncAlways, FsyncEverysec} {
			t.Run(string(store)+"/"+fsync.String(), func(t *testing.T) {
				mnt := filepath.Join(t.TempDir(), "mnt")
				testutil.MountTmpfs(t, mnt, 8<<20)
				dir := filepath.Join(mnt, "data")
				n := startFaulty(t, dir, store, fsync, nil)
				if err := addK(n, "before", 1); err != nil {
					t.Fatal(err)
				}
				ballast := testutil.FillDisk(t, mnt)
				w := startWriter(n)
				checkHeld(t, n, syscall.ENOSPC, "before")
				if err := os.Remove(ballast); err != nil {
					t.Fatal(err)
				}
				testutil.Poll(t, 10*time.Second, "the log fault to clear", func() bool { return n.LogFault() == nil })
				close(w.stop)
				<-w.done
				acked, err := w.result()
				if err != nil {
					t.Fatalf("the held write failed: %v", err)
				}
				if err := addK(n, "after", 2); err != nil {
					t.Fatal(err)
				}
				if n.Status().LogWriteErr != nil {
					t.Fatal("status still shows the log error")
				}
				n.Close()
				n = startFaulty(t, dir, LogStoreAuto, fsync, nil)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := n.ReadBarrier(ctx, false); err != nil {
					t.Fatal(err)
				}
				checkAll(t, n, append(acked, "before", "after"))
				t.Logf("%d writes acknowledged before and during the full disk", len(acked))
			})
		}
	}
}

// TestSingleNodeEIO plays an I/O error under the wal: the same as a full
// disk, with the reason "Input/output error"; and a failing everysec
// sync refuses writes until a sync succeeds.
func TestSingleNodeEIO(t *testing.T) {
	t.Run("append", func(t *testing.T) {
		var d diskFaults
		n := startFaulty(t, t.TempDir(), LogStoreWAL, FsyncAlways, d.inject)
		if err := addK(n, "before", 1); err != nil {
			t.Fatal(err)
		}
		d.set(wal.OpSync, syscall.EIO)
		w := startWriter(n)
		checkHeld(t, n, syscall.EIO, "before")
		if r := n.LogFault().(*LogWriteError).Reason(); r != "Input/output error" {
			t.Fatalf("reason %q", r)
		}
		d.set(wal.OpSync, nil)
		testutil.Poll(t, 10*time.Second, "the log fault to clear", func() bool { return n.LogFault() == nil })
		close(w.stop)
		<-w.done
		if _, err := w.result(); err != nil {
			t.Fatalf("the held write failed: %v", err)
		}
	})
	t.Run("everysec sync", func(t *testing.T) {
		var d diskFaults
		n := startFaulty(t, t.TempDir(), LogStoreWAL, FsyncEverysec, d.inject)
		if err := addK(n, "before", 1); err != nil {
			t.Fatal(err)
		}
		d.set(wal.OpSync, syscall.EIO)
		testutil.Poll(t, 10*time.Second, "the sync fault", func() bool { return n.LogFault() != nil })
		if err := addK(n, "refused", 1); !errors.Is(err, ErrLogWrite) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("write while syncs fail: %v", err)
		}
		d.set(wal.OpSync, nil)
		testutil.Poll(t, 10*time.Second, "the sync fault to clear", func() bool { return n.LogFault() == nil })
		if err := addK(n, "after", 1); err != nil {
			t.Fatal(err)
		}
	})
}

// faultyCluster is a test cluster whose nodes' wal can be failed.
func faultyCluster(t *testing.T) (*testCluster, map[string]*diskFaults) {
	faults := map[string]*diskFaults{"n1": {}, "n2": {}, "n3": {}, "n4": {}}
	tc := newTestCluster(t, 3, func(c *Config) { c.logInject = faults[c.ID].inject })
	return tc, faults
}

// TestClusterLeaderLogFails: the leader's log fails while the followers'
// work. It steps down (the write in flight gets the log error: it reached
// no log), another node leads, writes through the failing node are
// refused, and once its log works it catches up and serves writes again.
func TestClusterLeaderLogFails(t *testing.T) {
	tc, faults := faultyCluster(t)
	old := tc.waitLeader()
	if err := addK(old, "before", 1); err != nil {
		t.Fatal(err)
	}
	faults[old.ID()].set(wal.OpWrite, syscall.ENOSPC)
	if err := addK(old, "failed", 1); !errors.Is(err, ErrLogWrite) {
		t.Fatalf("write on the failing leader: %v, want ErrLogWrite", err)
	}
	leader := tc.leaderOtherThan(old)
	if err := addK(leader, "new leader", 2); err != nil {
		t.Fatal(err)
	}
	if err := addK(old, "refused", 3); !errors.Is(err, ErrLogWrite) {
		t.Fatalf("write through the failing node: %v, want ErrLogWrite", err)
	}
	if score(leader, "k", "failed") != "" {
		t.Fatal("the write refused with the log error was applied")
	}
	faults[old.ID()].set(wal.OpWrite, nil)
	testutil.Poll(t, 60*time.Second, "the old leader to catch up", func() bool {
		return old.LogFault() == nil && score(old, "k", "new leader") != ""
	})
	if err := addK(old, "healed", 4); err != nil {
		t.Fatal(err)
	}
	checkAll(t, old, []string{"before", "new leader", "healed"})
}

// TestClusterAllLogsFail: when every node's log fails, the leader holds:
// it keeps its term, followers keep hearing from it, writes are refused,
// and everything resumes when the logs work.
func TestClusterAllLogsFail(t *testing.T) {
	tc, faults := faultyCluster(t)
	first := tc.waitLeader()
	if err := addK(first, "before", 1); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "replication", func() bool {
		for _, n := range tc.all() {
			if score(n, "k", "before") == "" {
				return false
			}
		}
		return true
	})
	for _, f := range faults {
		f.set(wal.OpWrite, syscall.EIO)
	}
	// Writes go on until a leader that no other node can replace holds.
	var held *Node
	var ws []*writer
	testutil.Poll(t, 30*time.Second, "a leader holding a failed append", func() bool {
		for _, n := range tc.all() {
			if n.IsLeader() && n.stores.guard.heldRetries.Load() > 0 {
				held = n
				return true
			}
		}
		if l := tc.leaderNow(); l != nil && len(ws) < 10 {
			ws = append(ws, startWriter(l))
		}
		return false
	})
	checkHeld(t, held, syscall.EIO, "before")
	// The holding leader serves READONLY reads. Followers cannot learn
	// its commit index meanwhile (confirming it waits for the held
	// write), so they serve them within --max-staleness of their last
	// confirmed read index, then refuse with ErrStale.
	if err := held.ReadBarrier(context.Background(), true); err != nil {
		t.Fatalf("READONLY read on the holding leader %s: %v", held.ID(), err)
	}
	for _, n := range tc.all() {
		if n != held {
			if err := n.ReadBarrier(context.Background(), true); err != nil && !errors.Is(err, ErrStale) {
				t.Fatalf("READONLY read on %s: %v", n.ID(), err)
			}
		}
	}
	for _, f := range faults {
		f.set(wal.OpWrite, nil)
	}
	testutil.Poll(t, 60*time.Second, "every log to work", func() bool {
		for _, n := range tc.all() {
			if n.LogFault() != nil {
				return false
			}
		}
		return true
	})
	leader := tc.waitLeader()
	if err := addK(leader, "after", 2); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		close(w.stop)
	}
	for _, w := range ws {
		<-w.done
	}
	for _, n := range tc.all() {
		testutil.Poll(t, 60*time.Second, n.ID()+" to apply everything", func() bool { return score(n, "k", "after") != "" })
	}
}

// leaderNow returns the node that leads now, or nil.
func (tc *testCluster) leaderNow() *Node {
	for _, n := range tc.all() {
		if n.IsLeader() {
			return n
		}
	}
	return nil
}
