package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

// A follower that was cut off and is catching up does not serve READONLY
// reads of data older than MaxStaleness: hearing from the leader again is
// not enough, it must have applied what the leader had committed. Here
// the value it holds was overwritten more than MaxStaleness before the
// reads, behind a long log the follower has to catch up on.
func TestReadonlyStalenessBoundedByTheLeadersCommit(t *testing.T) {
	const staleness = 300 * time.Millisecond
	tc := newTestCluster(t, 3, func(c *Config) { c.MaxStaleness = staleness })
	leader := tc.waitLeader()
	f := tc.followers()[0]
	if _, err := leader.Apply(zaddEntry("x", "m", 1)); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 5*time.Second, "the follower to apply x=1", func() bool { return score(f, "x", "m") == "1" })
	tc.partition(f.ID())
	// A long log for the follower to catch up on, then the overwrite.
	// (Through the majority's leader of the moment: under the race
	// detector it may change.)
	majority := func() *Node { return tc.leaderOtherThan(f) }
	for done := 0; done < 20000; {
		var waits []func() (raftfsm.Result, error)
		l := majority()
		for i := done; i < done+500; i++ {
			waits = append(waits, l.Propose(zaddEntry("filler", fmt.Sprint(i), i)))
		}
		ok := true
		for _, w := range waits {
			if _, err := w(); err != nil {
				ok = false
			}
		}
		if ok {
			done += 500
		}
	}
	testutil.Poll(t, 10*time.Second, "the overwrite", func() bool {
		_, err := majority().Apply(zaddEntry("x", "m", 2))
		return err == nil
	})
	overwritten := time.Now()
	time.Sleep(2 * staleness) // the age the old value reaches: a fault's length, not a wait
	tc.heal(f.ID())
	stale, served, refused := 0, 0, 0
	deadline := time.Now().Add(10 * time.Second)
	for score(f, "x", "m") != "2" || served == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not catch up (served %d, refused %d)", served, refused)
		}
		err := f.ReadBarrier(context.Background(), true)
		switch {
		case errors.Is(err, ErrStale):
			refused++
			continue
		case err != nil:
			t.Fatalf("READONLY read: %v", err)
		}
		served++
		if got := score(f, "x", "m"); got != "2" {
			stale++
			if stale == 1 {
				t.Errorf("a READONLY read served x=%s, overwritten %v earlier (MaxStaleness %v)", got, time.Since(overwritten).Round(time.Millisecond), staleness)
			}
		}
	}
	t.Logf("%d READONLY reads served (%d stale), %d refused while catching up", served, stale, refused)
}

// In steady state a follower serves READONLY reads (refusing few if any),
// and every read reflects each write acknowledged more than MaxStaleness
// before it started.
func TestReadonlyStalenessSteadyState(t *testing.T) {
	const staleness = 200 * time.Millisecond
	tc := newTestCluster(t, 3, func(c *Config) { c.MaxStaleness = staleness })
	leader := tc.waitLeader()
	f := tc.followers()[0]
	var mu sync.Mutex
	acked := map[int]time.Time{}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := leader.Apply(zaddEntry("x", "m", i)); err != nil {
				done <- err
				return
			}
			mu.Lock()
			acked[i] = time.Now()
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // the write rate
		}
	}()
	served, refused := 0, 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		start := time.Now()
		if err := f.ReadBarrier(context.Background(), true); err != nil {
			refused++
			continue
		}
		served++
		var got int
		fmt.Sscan(score(f, "x", "m"), &got)
		mu.Lock()
		if at, ok := acked[got+1]; ok && at.Before(start.Add(-staleness)) {
			t.Errorf("a READONLY read started at %v served x=%d; x=%d was acknowledged %v before it",
				start.Format("15:04:05.000"), got, got+1, start.Sub(at))
		}
		mu.Unlock()
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d READONLY reads served, %d refused", served, refused)
	if served < 100 || refused > served/10 {
		t.Errorf("%d READONLY reads served, %d refused: a follower in steady state should serve them", served, refused)
	}
}
