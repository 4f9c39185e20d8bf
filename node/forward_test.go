package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

// A write through a follower is forwarded to the leader, and its reply
// comes back only once the follower has applied it: the follower then
// reads it locally with no barrier at all.
func TestFollowerForwardsWritesAndReadsThem(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	for i, f := range tc.followers() {
		res, err := f.Apply(zaddEntry("k", f.ID(), i+1))
		if err != nil {
			t.Fatalf("write through %s: %v", f.ID(), err)
		}
		if string(res.Reply) != ":1\r\n" || res.Index == 0 {
			t.Fatalf("write through %s: reply %q index %d", f.ID(), res.Reply, res.Index)
		}
		if got := score(f, "k", f.ID()); got != fmt.Sprint(i+1) {
			t.Fatalf("%s does not read its own write: score %q", f.ID(), got)
		}
	}
}

// Writes one goroutine pipelines through a follower are applied in the
// order proposed (several may share a log entry, a group, in order).
func TestForwardedPipelineKeepsOrder(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	f := tc.followers()[0]
	var waits []func() (raftfsm.Result, error)
	for i := 1; i <= 200; i++ {
		// ZINCRBY's reply is the running total: a write applied out of
		// order shows in the replies.
		waits = append(waits, f.Propose(raftfsm.CommandEntry(time.Now().UnixMilli(), 0, "zincrby", "k", fmt.Sprint(i), "m")))
	}
	var last uint64
	total := 0
	for i, w := range waits {
		res, err := w()
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		total += i + 1
		if want := fmt.Sprintf("$%d\r\n%d\r\n", len(fmt.Sprint(total)), total); string(res.Reply) != want {
			t.Fatalf("write %d: reply %q, want %q", i, res.Reply, want)
		}
		if res.Index < last {
			t.Fatalf("write %d applied at index %d, before index %d of the previous one", i, res.Index, last)
		}
		last = res.Index
	}
	// Answered once the leader applied them; the follower's reader waits
	// for the last index (what resp does before a client's next read).
	if err := f.WaitApplied(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	if got, want := score(f, "k", "m"), fmt.Sprint(total); got != want {
		t.Fatalf("final score %q, want %s", got, want)
	}
}

// A linearizable read on a follower sees every write acknowledged before
// it started, wherever it was acknowledged.
func TestFollowerReadSeesWritesAcknowledgedElsewhere(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	fs := tc.followers()
	for i := 1; i <= 50; i++ {
		writer := leader
		if i%2 == 0 {
			writer = fs[0]
		}
		if _, err := writer.Apply(zaddEntry("k", "m", i)); err != nil {
			t.Fatal(err)
		}
		if err := fs[1].ReadBarrier(context.Background(), false); err != nil {
			t.Fatalf("read barrier on %s: %v", fs[1].ID(), err)
		}
		if got := score(fs[1], "k", "m"); got != fmt.Sprint(i) {
			t.Fatalf("after write %d acknowledged by %s, %s reads %q", i, writer.ID(), fs[1].ID(), got)
		}
	}
}

// READONLY reads on a follower are served locally while the leader is
// heard from, and refused with ErrStale once it is not; a linearizable
// read on that follower fails (bounded) rather than return stale data.
func TestReadonlyStaleness(t *testing.T) {
	tc := newTestCluster(t, 3, func(c *Config) { c.MaxStaleness = 500 * time.Millisecond })
	f := tc.followers()[0]
	testutil.Poll(t, 5*time.Second, "a fresh follower", func() bool { return f.ReadBarrier(context.Background(), true) == nil })
	tc.partition(f.ID())
	testutil.Poll(t, 5*time.Second, "the partitioned follower to refuse READONLY reads", func() bool {
		return errors.Is(f.ReadBarrier(context.Background(), true), ErrStale)
	})
	// The majority moves on.
	leader := tc.leaderOtherThan(f)
	if _, err := leader.Apply(zaddEntry("k", "m", 7)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := f.ReadBarrier(ctx, false); err == nil {
		t.Fatalf("a partitioned follower served a linearizable read (score %q)", score(f, "k", "m"))
	}
}

// Without a leader a write fails with a clear error after a bounded wait.
func TestNoLeaderFailsBounded(t *testing.T) {
	tc := newTestCluster(t, 3, func(c *Config) { c.LeaderWait = 500 * time.Millisecond })
	survivor := tc.followers()[0]
	for _, n := range tc.all() {
		if n != survivor {
			tc.stop(n.ID())
		}
	}
	testutil.Poll(t, 10*time.Second, "the survivor to lose its leader", func() bool { return survivor.LeaderID() == "" })
	_, err := survivor.Apply(zaddEntry("k", "m", 1))
	if !errors.Is(err, ErrNoLeader) {
		t.Fatalf("write without a leader: %v, want ErrNoLeader", err)
	}
	if err := survivor.ReadBarrier(context.Background(), false); !errors.Is(err, ErrNoLeader) && !errors.Is(err, ErrTimeout) {
		t.Fatalf("read without a leader: %v", err)
	}
}

// A follower's writes keep working across a leadership transfer: entries
// refused by the old leader are sent again to the new one.
func TestForwardingFollowsLeadershipTransfer(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	f := tc.followers()[0]
	done := make(chan error, 1)
	lastOK, uncertain := 0, 0
	go func() {
		for i := 1; i <= 300; i++ {
			_, err := f.Apply(zaddEntry("k", "m", i))
			switch {
			case err == nil:
				lastOK = i
			case errors.Is(err, ErrUncertain):
				uncertain++
			default:
				done <- fmt.Errorf("write %d: %w", i, err)
				return
			}
		}
		done <- nil
	}()
	for range 3 {
		old := tc.waitLeader()
		if err := f.TransferLeadership(""); err != nil {
			t.Logf("transfer: %v", err)
		}
		testutil.Poll(t, 10*time.Second, "a new leader", func() bool { l := tc.waitLeader(); return l != old })
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := f.ReadBarrier(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	got := score(f, "k", "m")
	var final int
	fmt.Sscan(got, &final)
	t.Logf("last acknowledged write %d, %d uncertain, final score %d", lastOK, uncertain, final)
	if final < lastOK || (uncertain == 0 && final != 300) {
		t.Fatalf("final score %d, last acknowledged write %d (%d uncertain)", final, lastOK, uncertain)
	}
}

// A follower's linearizable read whose read-index request went to a
// leader that then stopped answering (paused, its connection open) is
// asked again of the leader elected next, as soon as this node applies
// the new term, instead of failing when the round's deadline passes.
func TestFollowerReadOutlivesAPausedLeader(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	old := tc.waitLeader()
	f := tc.followers()[0]
	if _, err := f.Apply(zaddEntry("k", "m", 1)); err != nil {
		t.Fatal(err)
	}
	tc.pause(old.ID())
	// f still takes old for the leader: its read asks old, which never answers.
	if f.LeaderID() != old.ID() {
		t.Skipf("%s no longer followed %s when the read began", f.ID(), old.ID())
	}
	start := time.Now()
	err := f.ReadBarrier(context.Background(), false)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("read on %s after pausing leader %s: %v after %v (the round waited for the paused leader)", f.ID(), old.ID(), err, took)
	}
	if got := score(f, "k", "m"); got != "1" {
		t.Fatalf("score after the read: %q, want 1", got)
	}
	t.Logf("the read on %s returned after %v; leader now %s", f.ID(), took.Round(time.Millisecond), f.LeaderID())
}

// forwardedEntry proposes what the follower encoded with the leader's
// clock: a ZADD, a batch and a transaction in the bytes Encode gives them
// at the new time, an ACL change (which has no clock in its bytes) as it
// came, each a copy the caller's buffer can be reused under; what a
// client could not have sent is refused, and a refusal or a large batch
// leaves nothing behind in the scratch entry the next one decodes into.
func TestForwardedEntryRestampsAndRefuses(t *testing.T) {
	const was, now = 1000, 1700000000123
	big := &raftfsm.Entry{Op: raftfsm.OpBatch, Proto: 2, Time: was}
	for i := range 200 {
		big.Commands = append(big.Commands, raftfsm.NewCommand(i%16, "zadd", fmt.Sprint("k", i), "1", "m", "2", "n"))
	}
	acl := &raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: raftfsm.ACLDelUser, Users: []raftfsm.ACLUser{{Name: "alice"}}}}
	multi := &raftfsm.Entry{Op: raftfsm.OpMulti, Proto: 3, Time: was, WatchIndex: 5,
		Watched:  []raftfsm.WatchedKey{{DB: 1, Key: []byte("w")}},
		Commands: []raftfsm.Command{raftfsm.NewCommand(1, "zadd", "w", "3", "x"), raftfsm.NewCommand(0, "zscore", "w", "x")}}
	read := raftfsm.CommandEntry(was, 0, "zscore", "k", "m")
	for round := range 2 {
		for i, e := range []*raftfsm.Entry{zaddEntry("k", "m", 1), big, read, multi, acl, big, zaddEntry("k", "m", 2)} {
			h := *e
			h.Term, h.Proposal = 4, uint64(100+i)
			data := h.Encode(nil)
			out, term, proposal, err := forwardedEntry(data, now)
			if e == read {
				if !errors.Is(err, raftfsm.ErrInvalidEntry) {
					t.Fatalf("round %d, entry %d: a read proposed: %v", round, i, err)
				}
				continue
			}
			if err != nil || term != 4 || proposal != uint64(100+i) {
				t.Fatalf("round %d, entry %d (%v): term %d, proposal %d, %v", round, i, e.Op, term, proposal, err)
			}
			want := h
			if e.Op != raftfsm.OpACL {
				want.Time = now
			}
			wantData := want.Encode(nil)
			clear(data)
			if string(out) != string(wantData) {
				t.Fatalf("round %d, entry %d (%v): proposed %x, want %x", round, i, e.Op, out, wantData)
			}
		}
	}
}
