package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/raftfsm"
)

// garbageEntries returns an op this build does not know, another version,
// and random byte strings that do not decode (the seed is logged).
func garbageEntries(t *testing.T) [][]byte {
	r := testutil.Rand(t, 17)
	out := [][]byte{{raftfsm.Version, 250}, {raftfsm.Version + 1, byte(raftfsm.OpCommand)}}
	for len(out) < 6 {
		b := make([]byte, r.IntN(64))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if _, err := raftfsm.Decode(b); err != nil {
			out = append(out, b)
		}
	}
	return out
}

// startSingle starts a single-voter node on dir with the given log store,
// logging into logs.
func startSingle(t *testing.T, dir string, store LogStore, logs *testutil.SyncBuffer) *Node {
	t.Helper()
	return startNode(t, Config{DataDir: dir, LogStore: store, Fsync: FsyncEverysec,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "n1", Level: hclog.Info, Output: logs})})
}

// Garbage handed straight to raft (as a peer without credentials could
// append it) is committed and recorded as failed: its proposer gets an
// error, the node goes on serving writes and reads, and a restart on the
// same data directory replays it without stopping, with either log store.
func TestGarbageInTheLogFailsAndIsReplayed(t *testing.T) {
	for _, store := range []LogStore{LogStoreWAL, LogStoreBolt} {
		t.Run(string(store), func(t *testing.T) {
			logs := &testutil.SyncBuffer{}
			defer func() {
				if t.Failed() {
					t.Logf("node logs:\n%s", logs.String())
				}
			}()
			dir := t.TempDir()
			n := startSingle(t, dir, store, logs)
			zadd(t, n, "k", "1", "before")
			garbage := garbageEntries(t)
			for i, g := range garbage {
				f := n.Raft().Apply(g, 5*time.Second)
				_, err := (&Pending{f: f}).Wait()
				if !errors.Is(err, raftfsm.ErrEntryFailed) {
					t.Fatalf("garbage %d (%x): Wait = %v, want ErrEntryFailed", i, g, err)
				}
				if got := zadd(t, n, "k", fmt.Sprint(i), "after"); got != ":0\r\n" && got != ":1\r\n" {
					t.Fatalf("a write after garbage %d: %q", i, got)
				}
			}
			want := uint64(len(garbage))
			if got := n.Status().FailedEntries; got != want {
				t.Fatalf("FailedEntries = %d, want %d", got, want)
			}
			if !strings.Contains(logs.String(), "[ERROR] n1.fsm: log entry failed") {
				t.Fatal("no ERROR line for the failed entries")
			}
			readBoth := func(n *Node) {
				t.Helper()
				if err := n.ReadBarrier(context.Background(), false); err != nil {
					t.Fatal(err)
				}
				if b, a := score(n, "k", "before"), score(n, "k", "after"); b != "1" || a != fmt.Sprint(len(garbage)-1) {
					t.Fatalf("scores before=%q after=%q", b, a)
				}
			}
			readBoth(n)
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}

			n2 := startSingle(t, dir, store, logs)
			testutil.Poll(t, 10*time.Second, "the restarted node to replay its log", func() bool {
				return n2.FSM().Failed() == want
			})
			readBoth(n2)
			if got := zadd(t, n2, "k", "5", "restarted"); got != ":1\r\n" {
				t.Fatalf("a write after the restart: %q", got)
			}
		})
	}
}

// Every node of a cluster records the same garbage entries as failed and
// stays identical to the others.
func TestGarbageFailsOnEveryNode(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	garbage := garbageEntries(t)
	for i, g := range garbage {
		if _, err := (&Pending{f: leader.Raft().Apply(g, 5*time.Second)}).Wait(); !errors.Is(err, raftfsm.ErrEntryFailed) {
			t.Fatalf("garbage %d: %v", i, err)
		}
		if _, err := tc.followers()[i%2].Apply(zaddEntry("k", fmt.Sprint(i), i)); err != nil {
			t.Fatalf("a write through a follower after garbage %d: %v", i, err)
		}
	}
	want := uint64(len(garbage))
	last := leader.AppliedIndex()
	for _, n := range tc.all() {
		testutil.Poll(t, 10*time.Second, n.ID()+" to apply the log", func() bool { return n.AppliedIndex() >= last })
		if got := n.FSM().Failed(); got != want {
			t.Errorf("%s recorded %d failed entries, want %d", n.ID(), got, want)
		}
		for i := range garbage {
			if got := score(n, "k", fmt.Sprint(i)); got != fmt.Sprint(i) {
				t.Errorf("%s: member %d has score %q", n.ID(), i, got)
			}
		}
	}
}

// A forwarded entry that raftfsm.Validate refuses (garbage, an op only a
// leader proposes, a read, an unknown command, bad arguments) is refused
// with ErrBadEntry before it reaches the log, on every node.
func TestForwardedGarbageIsRefused(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	leader := tc.waitLeader()
	follower := tc.followers()[0]
	// A write through a follower first, so the log holds more than the
	// configuration and the barrier.
	if _, err := follower.Apply(zaddEntry("k", "m", 1)); err != nil {
		t.Fatal(err)
	}
	cmdEntry := func(args ...string) []byte {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		return (&raftfsm.Entry{Op: raftfsm.OpCommand, Proto: 2, Commands: []raftfsm.Command{{Argv: argv}}}).Encode(nil)
	}
	bad := garbageEntries(t)
	bad = append(bad,
		(&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil),
		(&raftfsm.Entry{Op: raftfsm.OpExpire, Expired: []raftfsm.ExpiredKey{{Key: []byte("k")}}}).Encode(nil),
		raftfsm.RulesEntry(nil).Encode(nil),
		cmdEntry("ZCARD", "k"),
		cmdEntry("NOSUCH", "k"),
		cmdEntry("ZADD", "k", "notafloat", "m"),
	)
	last := leader.Raft().LastIndex()
	peers := (*testPeers)(tc)
	for i, b := range bad {
		fwd, err := peers.Apply(leader.ID(), b)
		if err != nil {
			t.Fatal(err)
		}
		<-fwd.Done()
		if _, _, err := fwd.Result(); !errors.Is(err, ErrBadEntry) {
			t.Fatalf("forwarded entry %d (%x): %v, want ErrBadEntry", i, b, err)
		}
	}
	if got := leader.Raft().LastIndex(); got != last {
		t.Fatalf("the leader's log grew from %d to %d entries", last, got)
	}
	// The follower's own forwarding of a good write still works.
	if res, err := follower.Apply(zaddEntry("k", "m", 2)); err != nil || string(res.Reply) != ":0\r\n" {
		t.Fatalf("a good forwarded write: %q %v", res.Reply, err)
	}
	for _, n := range tc.all() {
		if f := n.FSM().Failed(); f != 0 {
			t.Errorf("%s recorded %d failed entries", n.ID(), f)
		}
	}
}

// A failed entry's error crosses the forwarding wire as itself.
func TestFailedEntryOnTheWire(t *testing.T) {
	err := fmt.Errorf("%w (index 9): %w", raftfsm.ErrEntryFailed, raftfsm.ErrCorrupt)
	line, ok := WireError(err)
	if !ok || !strings.HasPrefix(line, "FAILED ") {
		t.Fatalf("WireError = %q, %v", line, ok)
	}
	if back := FromWire(line); back != raftfsm.ErrEntryFailed {
		t.Fatalf("FromWire(%q) = %v", line, back)
	}
}
