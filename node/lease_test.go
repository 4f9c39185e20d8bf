package node

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

func leaseReads(c *Config) { c.LeaseReads = true }

// sequentialReads runs n linearizable reads on nd one after another and
// returns how many leadership rounds nd ran meanwhile.
func sequentialReads(t *testing.T, nd *Node, n int) uint64 {
	t.Helper()
	before := nd.Metrics().ReadRounds
	for i := range n {
		if err := nd.ReadBarrier(context.Background(), false); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	return nd.Metrics().ReadRounds - before
}

// With leases, a leader's steady reads share a round per half lease
// instead of one each; without, each sequential read has its own.
func TestLeaseSavesRounds(t *testing.T) {
	for _, lease := range []bool{false, true} {
		t.Run(fmt.Sprintf("lease=%v", lease), func(t *testing.T) {
			var opts func(*Config)
			if lease {
				opts = leaseReads
			}
			tc := newTestCluster(t, 3, opts)
			leader := tc.waitLeader()
			const reads = 300
			rounds := sequentialReads(t, leader, reads)
			t.Logf("%d reads, %d rounds", reads, rounds)
			if lease && rounds > reads/10 {
				t.Fatalf("with a lease, %d reads took %d rounds", reads, rounds)
			}
			if !lease && rounds < reads {
				t.Fatalf("without a lease, %d reads took only %d rounds", reads, rounds)
			}
		})
	}
}

// A leader cut off from the others keeps its lease at most until they
// can elect another: once the new leader has acknowledged a write, no
// read on the old leader that begins afterwards succeeds without it.
func TestLeaseEndsBeforeANewLeaderWrites(t *testing.T) {
	tc := newTestCluster(t, 3, leaseReads)
	old := tc.waitLeader()
	if _, err := old.Apply(zaddEntry("k", "m", 1)); err != nil {
		t.Fatal(err)
	}
	sequentialReads(t, old, 20) // holds a lease now

	type read struct {
		start time.Time
		err   error
		got   string
	}
	var (
		mu    sync.Mutex
		reads []read
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			r := read{start: time.Now()}
			r.err = old.ReadBarrier(ctx, false)
			cancel()
			if r.err == nil {
				r.got = score(old, "k", "m")
			}
			mu.Lock()
			reads = append(reads, r)
			mu.Unlock()
		}
	}()

	tc.partition(old.ID())
	leader := tc.leaderOtherThan(old)
	if _, err := leader.Apply(zaddEntry("k", "m", 2)); err != nil {
		t.Fatal(err)
	}
	acked := time.Now()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	after, served := 0, 0
	for _, r := range reads {
		if r.start.Before(acked) {
			if r.err == nil {
				served++
			}
			continue
		}
		after++
		if r.err == nil && r.got != "2" {
			t.Fatalf("a read on the old leader that began %v after the new leader acknowledged a write read %q",
				r.start.Sub(acked), r.got)
		}
	}
	t.Logf("%d reads served on the old leader before the write; %d reads began after it, none served stale", served, after)
	if after == 0 {
		t.Fatal("no read began after the write")
	}
}

// A node that restarts on its Raft state waits a heartbeat timeout before
// it starts Raft (it may have answered heartbeats inside a lease it
// would otherwise vote against); a node without state starts at once.
func TestRestartWaitsOutLeases(t *testing.T) {
	tc := newTestCluster(t, 3, leaseReads)
	const waiting = "waiting out any leader lease before joining Raft"
	if strings.Contains(tc.logs.String(), waiting) {
		t.Fatal("a node without Raft state waited out a lease")
	}
	leader := tc.waitLeader()
	if _, err := leader.Apply(zaddEntry("k", "m", 1)); err != nil {
		t.Fatal(err)
	}
	f := tc.followers()[0]
	id, dir := f.ID(), f.cfg.DataDir
	tc.stop(id)
	start := time.Now()
	tc.start(id, dir)
	took := time.Since(start)
	if !strings.Contains(tc.logs.String(), waiting) {
		t.Fatal("a node restarting on its Raft state did not wait out a lease")
	}
	if took < f.heartbeat {
		t.Fatalf("restart took %v, less than the heartbeat timeout %v", took, f.heartbeat)
	}
	tc.waitLeader()
}

// The reads that need no wait and no round trip allocate nothing (no
// timer context): a leader's linearizable read under its lease, a
// leader's READONLY read, and a follower's READONLY read within the
// staleness bound.
func TestReadsWithoutWaitingAllocateNothing(t *testing.T) {
	tc := newTestCluster(t, 3, leaseReads)
	leader := tc.waitLeader()
	if _, err := leader.Apply(zaddEntry("k", "m", 1)); err != nil {
		t.Fatal(err)
	}
	var follower *Node
	for _, nd := range tc.all() {
		if nd != leader {
			follower = nd
		}
	}
	sequentialReads(t, leader, 5) // takes the lease
	if err := follower.ReadBarrier(context.Background(), true); err != nil {
		t.Fatal(err) // catches up and takes a staleness sample
	}
	for _, c := range []struct {
		name  string
		nd    *Node
		local bool
	}{{"leader linearizable", leader, false}, {"leader READONLY", leader, true}, {"follower READONLY", follower, true}} {
		var err error
		allocs := testing.AllocsPerRun(200, func() {
			if e := c.nd.ReadBarrier(context.Background(), c.local); e != nil {
				err = e
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// A lease renewal or a staleness sample in the background may
		// allocate during a run now and then; a timer context per read
		// would be at least 200 runs' worth.
		if allocs >= 1 {
			t.Errorf("%s: %.1f allocations a read, want none", c.name, allocs)
		}
	}
}

// A linearizable read never fails because leadership moved while it
// waited for its confirmation round: a read has no outcome to be unsure
// of, so a leader that loses leadership mid-round reads as a follower.
func TestReadsThroughLeadershipTransfersSucceed(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	tc.waitLeader()
	stop := make(chan struct{})
	errs := make(chan error, 3)
	var reads sync.WaitGroup
	for _, n := range tc.all() {
		reads.Add(1)
		go func() {
			defer reads.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if err := n.ReadBarrier(context.Background(), false); err != nil {
					errs <- fmt.Errorf("read %d on %s: %w", i, n.ID(), err)
					return
				}
			}
		}()
	}
	for range 8 {
		old := tc.waitLeader()
		if err := old.TransferLeadership(""); err != nil {
			t.Logf("transfer: %v", err)
		}
		testutil.Poll(t, 10*time.Second, "a new leader", func() bool { return tc.waitLeader() != old })
	}
	close(stop)
	reads.Wait()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A follower's linearizable reads ask the leader for its read index,
// concurrent ones sharing a request; the metrics count both.
func TestFollowerReadIndexRequestsAreCounted(t *testing.T) {
	tc := newTestCluster(t, 3, leaseReads)
	tc.waitLeader()
	f := tc.followers()[0]
	before := f.Metrics()
	const readers, each = 8, 25
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := f.ReadBarrier(context.Background(), false); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	after := f.Metrics()
	reqs, reads := after.ReadIndexRequests-before.ReadIndexRequests, after.ReadIndexReads-before.ReadIndexReads
	t.Logf("%d reads, %d read index requests", reads, reqs)
	if reads != readers*each {
		t.Fatalf("%d reads counted, want %d", reads, readers*each)
	}
	if reqs == 0 || reqs > reads {
		t.Fatalf("%d requests for %d reads", reqs, reads)
	}
}
