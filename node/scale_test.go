package node

import (
	"strconv"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
)

// TestCatchUpAtScale measures how long a follower added to a one-node
// cluster takes to catch up by InstallSnapshot when the leader holds one
// large sorted set, and what the leader's snapshot took. It runs small
// (200,000 members) by default; docs/operations.md ("Snapshots at
// scale") has the figures of
//
//	GOBLIN_SCALE_MEMBERS=10000000 go test -run TestCatchUpAtScale -v -timeout 30m ./node/
func TestCatchUpAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large sets")
	}
	members, _ := testutil.ScaleMembers(t, 200_000)
	for _, layout := range []string{"int32:float32", "standard"} {
		t.Run(layout, func(t *testing.T) {
			catchUp(t, layout, members)
		})
	}
}

func catchUp(t *testing.T, layout string, members int) {
	tc := newTestCluster(t, 1, func(c *Config) { c.SnapshotThreshold = 16 })
	leader := tc.waitLeader()
	member := func(i int) string {
		if layout == "standard" {
			return "member:" + strconv.Itoa(i)
		}
		return strconv.Itoa(i)
	}
	apply := func(argv ...string) {
		t.Helper()
		c := raftfsm.Command{}
		for _, a := range argv {
			c.Argv = append(c.Argv, []byte(a))
		}
		e := &raftfsm.Entry{Op: raftfsm.OpCommand, Proto: 2, Time: time.Now().UnixMilli(), Commands: []raftfsm.Command{c}}
		res, err := leader.Apply(e)
		if err != nil || res.Err != nil || len(res.Reply) > 0 && res.Reply[0] == '-' {
			t.Fatalf("%s: %v %v %q", argv[0], err, res.Err, res.Reply)
		}
	}
	start := time.Now()
	apply("zcreate", "k", layout)
	const per = 1000 // members per entry
	for at := 0; at < members; at += per {
		argv := []string{"zadd", "k"}
		for i := at; i < min(at+per, members); i++ {
			argv = append(argv, strconv.Itoa(i*7919%1_000_003), member(i))
		}
		apply(argv...)
	}
	t.Logf("loaded %d members in %v", members, time.Since(start).Round(time.Millisecond))
	// Two snapshots, so that the log is compacted past what a new node
	// could replay.
	var snapTime time.Duration
	for i := 0; ; i++ {
		t0 := time.Now()
		if err := leader.Raft().Snapshot().Error(); err != nil {
			t.Fatal(err)
		}
		snapTime = time.Since(t0)
		apply("zadd", "k", "1", member(0))
		if first, _ := leader.stores.guard.FirstIndex(); first > 1 {
			break
		}
		if i == 3 {
			t.Fatalf("log not compacted after %d snapshots", i+1)
		}
	}
	want := leader.AppliedIndex()
	t0 := time.Now()
	n2 := tc.start("n2", tc.dir())
	if err := leader.AddVoter("n2", "raft-n2"); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 20*time.Minute, "n2 to install the snapshot", func() bool { return n2.AppliedIndex() >= want })
	took := time.Since(t0)
	got := -1
	n2.View(func(ks *keyspace.Keyspace, now int64) {
		if e := ks.DB(0).Get([]byte("k"), now); e != nil && e.Z.Layout().String() == layout {
			got = e.Z.Len()
		}
	})
	if got != members {
		t.Fatalf("n2 holds %d members of layout %s, want %d", got, layout, members)
	}
	t.Logf("%s, %d members: the leader's snapshot (taken and persisted) %v; a new follower caught up by InstallSnapshot in %v",
		layout, members, snapTime.Round(time.Millisecond), took.Round(time.Millisecond))
}
