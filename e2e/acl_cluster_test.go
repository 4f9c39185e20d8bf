package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// ACL users are replicated through the log: a user created on one node
// authenticates on the others, a user deleted on one node loses its
// connections on every node, and a follower that catches up by snapshot
// install gets the users from the snapshot.
func TestClusterACLReplication(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Args: []string{"--snapshot-threshold", "64", "--snapshot-interval", "200ms", "--fsync", "everysec"}})
	ctx := context.Background()
	leader := WaitLeader(t, nodes, 30*time.Second)
	fs := Followers(nodes, leader)
	f1, f2 := fs[0], fs[1]

	// Created on a follower: the entry is forwarded to the leader.
	if err := f1.Client().Do(ctx, "ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all", "-flushall").Err(); err != nil {
		t.Fatal(err)
	}
	alice := f2.Client(func(o *redis.Options) { o.Username, o.Password = "alice", "pw" })
	testutil.Eventually(t, 10*time.Second, func() error { return alice.Ping(ctx).Err() })
	if err := alice.FlushAll(ctx).Err(); err == nil || err.Error() != "NOPERM User alice has no permissions to run the 'flushall' command" {
		t.Fatalf("alice FLUSHALL on another node: %v", err)
	}
	for _, n := range nodes {
		testutil.Eventually(t, 10*time.Second, func() error {
			list, err := n.Client().Do(ctx, "ACL", "LIST").StringSlice()
			if err != nil {
				return err
			}
			if len(list) != 2 || !strings.HasPrefix(list[0], "user alice on sanitize-payload #") {
				return fmt.Errorf("%s: ACL LIST %q", n.ID, list)
			}
			return nil
		})
	}

	// Deleted on the leader: alice's connection to a follower closes.
	raw := DialRaw(t, f2.Addr)
	if got := string(raw.Do("AUTH", "alice", "pw")); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if n, err := leader.Client().Do(ctx, "ACL", "DELUSER", "alice").Int(); err != nil || n != 1 {
		t.Fatalf("DELUSER: %v %v", n, err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if !closedByServer(raw) {
			return errors.New("alice's connection to a follower is still open")
		}
		return nil
	})

	// A follower that misses the user's creation catches up by snapshot.
	lagger := f2
	lagger.Kill()
	if err := leader.Client().Do(ctx, "ACL", "SETUSER", "bob", "on", ">pw2", "~b*", "+@read").Err(); err != nil {
		t.Fatal(err)
	}
	c := leader.Client()
	for j := 0; j < 100; j++ {
		pipe := c.Pipeline()
		for i := 0; i < 10; i++ {
			pipe.ZAdd(ctx, fmt.Sprint("s", i), redis.Z{Score: float64(j), Member: fmt.Sprint("m", j)})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	compactLog(t, leader)
	lagger.Restart()
	bob := lagger.Client(func(o *redis.Options) { o.Username, o.Password = "bob", "pw2" })
	testutil.Eventually(t, 30*time.Second, func() error {
		if err := bob.ZCard(ctx, "b1").Err(); err != nil {
			return fmt.Errorf("bob on the restarted follower: %w", err)
		}
		return nil
	})
	if raftStat(t, lagger, "last_snapshot_index") == "0" {
		t.Fatal("the follower caught up without installing a snapshot")
	}
	if err := bob.ZCard(ctx, "s1").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("bob read a key outside his patterns: %v", err)
	}
}

// A node started with --aclfile enforces its users at once, replicates
// them, and keeps what ACL SETUSER changed across a restart with the same
// file; --requirepass is the default user's password.
func TestACLFileAndRestart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	os.WriteFile(file, []byte("user default on nopass ~* &* +@all\nuser alice on >pw ~* +@all\n"), 0o644)
	g := StartGoblind(t, NodeOptions{Args: []string{"--aclfile", file, "--snapshot-threshold", "16", "--snapshot-interval", "200ms"}})
	ctx := context.Background()
	alice := g.Client(func(o *redis.Options) { o.Username, o.Password = "alice", "pw" })
	if err := alice.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	admin := g.Client()
	if err := admin.Do(ctx, "ACL", "SETUSER", "alice", ">pw2").Err(); err != nil {
		t.Fatal(err)
	}
	// Enough writes for a snapshot, so the restart restores the users
	// from it.
	for i := 0; i < 40; i++ {
		admin.ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: fmt.Sprint(i)})
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		m, _ := filepath.Glob(filepath.Join(g.Data, "snapshots", "snapshots", "*", "state.bin"))
		if len(m) == 0 {
			return errors.New("no snapshot yet")
		}
		return nil
	})
	g.Stop()
	g.Restart()
	alice2 := g.Client(func(o *redis.Options) { o.Username, o.Password = "alice", "pw2" })
	if err := alice2.Ping(ctx).Err(); err != nil {
		t.Fatalf("alice's second password after a restart with the same aclfile: %v", err)
	}
	// A changed file is applied at the next start.
	os.WriteFile(file, []byte("user default on nopass ~* &* +@all\nuser carol on >pw ~* +@all\n"), 0o644)
	g.Stop()
	g.Restart()
	testutil.Eventually(t, 10*time.Second, func() error {
		users, err := g.Client().Do(ctx, "ACL", "USERS").StringSlice()
		if err != nil || strings.Join(users, " ") != "carol default" {
			return fmt.Errorf("users %v %v", users, err)
		}
		return nil
	})
	// A bad file stops the start, as it stops Redis's.
	os.WriteFile(file, []byte("user bob +nosuch\n"), 0o644)
	g.Stop()
	bad := StartGoblind(t, NodeOptions{Args: []string{"--aclfile", file}, NoWait: true})
	testutil.Eventually(t, 10*time.Second, func() error {
		if bad.Running() {
			return errors.New("goblind with a bad aclfile still runs")
		}
		return nil
	})
	if !strings.Contains(bad.Log(), "Error in applying operation '+nosuch'") {
		t.Fatalf("log: %s", bad.Log())
	}
}

// --requirepass is the default user's password, and a restart with the
// same one keeps a password set since by CONFIG SET.
func TestRequirePassReplicated(t *testing.T) {
	g := StartGoblind(t, NodeOptions{Args: []string{"--requirepass", "one"}, NoWait: true})
	ctx := context.Background()
	c := g.Client(func(o *redis.Options) { o.Password = "one" })
	testutil.Eventually(t, 20*time.Second, func() error {
		s, err := c.Do(ctx, "ACL", "GETUSER", "default").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(fmt.Sprint(s), "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed") {
			return fmt.Errorf("default user %v", s)
		}
		return nil
	})
	if err := c.ConfigSet(ctx, "requirepass", "two").Err(); err != nil {
		t.Fatal(err)
	}
	g.Stop()
	g.start(nil)
	two := g.Client(func(o *redis.Options) { o.Password = "two" })
	testutil.Eventually(t, 20*time.Second, func() error {
		if err := two.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("CONFIG SET's password after a restart with the same --requirepass: %w", err)
		}
		return nil
	})
	// A new --requirepass is applied at the next start.
	g.Stop()
	g.Args = append(g.Args, "--requirepass", "three")
	g.start(nil)
	three := g.Client(func(o *redis.Options) { o.Password = "three" })
	testutil.Eventually(t, 20*time.Second, func() error { return three.Ping(ctx).Err() })
	if err := two.Ping(ctx).Err(); err == nil {
		t.Fatal("the old password still works")
	}
}
