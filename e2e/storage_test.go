package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node/wal"
)

// infoField reads one INFO field.
func infoField(t testing.TB, c *redis.Client, section, key string) string {
	t.Helper()
	info, err := Info(context.Background(), c, section)
	if err != nil {
		t.Fatal(err)
	}
	return info[key]
}

// bgWriter adds members w0, w1, ... to key k one at a time in the
// background, with no reply timeout, until stopped or a write fails.
type bgWriter struct {
	mu    sync.Mutex
	acked []string
	err   error
	stop  chan struct{}
	done  chan struct{}
}

func startBGWriter(g *Goblind) *bgWriter {
	c := g.Client(func(o *redis.Options) { o.ReadTimeout = -1 })
	w := &bgWriter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			m := fmt.Sprint("w", i)
			err := c.ZAdd(context.Background(), "k", redis.Z{Score: float64(i), Member: m}).Err()
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

// end stops the writer, waits for its write in flight, and returns what
// was acknowledged and the error that stopped it.
func (w *bgWriter) end() ([]string, error) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked, w.err
}

func checkMembers(t testing.TB, c *redis.Client, members []string) {
	t.Helper()
	for _, m := range members {
		if err := c.ZScore(context.Background(), "k", m).Err(); err != nil {
			t.Fatalf("acknowledged member %s: %v", m, err)
		}
	}
}

// holdOnFullDisk starts a single node with the log store on a small
// tmpfs, adds "before" to k, fills the disk and starts a background
// writer, and returns once the node reports its log failing, with the
// file that filled the disk and the Raft term from before it filled.
func holdOnFullDisk(t *testing.T, store string) (g *Goblind, c *redis.Client, ballast string, w *bgWriter, term string) {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	testutil.MountTmpfs(t, mnt, 20<<20)
	g = StartGoblind(t, NodeOptions{Data: filepath.Join(mnt, "data"), Args: []string{"--log-store", store}})
	c = g.Client()
	if err := c.ZAdd(context.Background(), "k", redis.Z{Score: 1, Member: "before"}).Err(); err != nil {
		t.Fatal(err)
	}
	term = infoField(t, c, "raft", "raft_term")
	ballast = testutil.FillDisk(t, mnt)
	w = startBGWriter(g)
	testutil.Eventually(t, 20*time.Second, func() error {
		if s := infoField(t, c, "persistence", "aof_last_write_status"); s != "err" {
			return fmt.Errorf("aof_last_write_status:%s", s)
		}
		return nil
	})
	return g, c, ballast, w, term
}

const misconfENOSPC = "MISCONF Errors writing to the Raft log: No space left on device"

// TestFullDiskSingleNode: a node whose data directory's file system fills
// up keeps leading (its term does not move), serves reads, answers writes
// with MISCONF, and shows the error in INFO; once space is freed the
// write it held is stored and writes resume, without a restart; nothing
// acknowledged is lost, across a kill -9 too.
func TestFullDiskSingleNode(t *testing.T) {
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) {
			g, c, ballast, w, term := holdOnFullDisk(t, store)
			ctx := context.Background()
			// The fault lasts several election timeouts: no election.
			testutil.Eventually(t, 20*time.Second, func() error {
				since, _ := strconv.ParseInt(infoField(t, c, "persistence", "goblin_log_write_error_since"), 10, 64)
				if time.Since(time.Unix(since, 0)) < 4*time.Second {
					return errors.New("the fault is recent")
				}
				return nil
			})
			if err := c.ZAdd(ctx, "k", redis.Z{Score: 2, Member: "refused"}).Err(); err == nil || err.Error() != misconfENOSPC {
				t.Fatalf("write on a full disk: %v, want %q", err, misconfENOSPC)
			}
			if s, err := c.ZScore(ctx, "k", "before").Result(); err != nil || s != 1 {
				t.Fatalf("read on a full disk: %v %v", s, err)
			}
			if e := infoField(t, c, "persistence", "goblin_log_write_error"); !strings.Contains(e, "no space left on device") {
				t.Fatalf("goblin_log_write_error:%s", e)
			}
			if now := infoField(t, c, "raft", "raft_term"); now != term {
				t.Fatalf("term %s → %s while the disk was full", term, now)
			}
			if role := infoField(t, c, "replication", "role"); role != "master" {
				t.Fatalf("role %s while the disk was full", role)
			}
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 20*time.Second, func() error {
				return c.ZAdd(ctx, "k", redis.Z{Score: 3, Member: "after"}).Err()
			})
			acked, err := w.end()
			if err != nil {
				t.Fatalf("the write held while the disk was full: %v", err)
			}
			if s := infoField(t, c, "persistence", "aof_last_write_status"); s != "ok" {
				t.Fatalf("aof_last_write_status:%s after space was freed", s)
			}
			if now := infoField(t, c, "raft", "raft_term"); now != term {
				t.Fatalf("term %s → %s", term, now)
			}
			g.Kill()
			g.Restart()
			checkMembers(t, g.Client(), append(acked, "before", "after"))
			t.Logf("%d writes acknowledged around the full disk, all kept", len(acked))
		})
	}
}

// TestStopWhileDiskFull: SIGTERM stops a node whose disk is full while
// it holds a write: the held write is answered with an error, never OK,
// the node exits 0, and once there is room it starts again with
// everything it acknowledged. (A held append used to keep its clients'
// connections open, and the stop waited for them: goblind hung until
// SIGKILL.)
func TestStopWhileDiskFull(t *testing.T) {
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) {
			g, _, ballast, w, _ := holdOnFullDisk(t, store)
			g.Stop() // SIGKILL after 15 s
			if code := g.ExitCode(); code != 0 {
				t.Fatalf("exit code %d after SIGTERM with the disk full (-1: it did not stop and was killed); log:\n%s", code, g.Log())
			}
			acked, err := w.end()
			if err == nil {
				t.Fatal("the write held while the disk was full was acknowledged")
			}
			t.Logf("%d writes acknowledged before the disk filled; the held one: %v", len(acked), err)
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			g.Restart()
			checkMembers(t, g.Client(), append(acked, "before"))
		})
	}
}

// TestFullDiskClusterLeader: the leader's disk fills in a 3-node cluster
// whose other disks have room. It steps down, another node leads and
// takes writes, writes through the full node get MISCONF, and once space
// is freed that node catches up and takes writes again.
func TestFullDiskClusterLeader(t *testing.T) {
	rng := testutil.Rand(t, 3)
	root := t.TempDir()
	mnts := make([]string, 3)
	for i := range mnts {
		mnts[i] = filepath.Join(root, fmt.Sprint("mnt", i))
		testutil.MountTmpfs(t, mnts[i], 24<<20)
	}
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Data: func(i int) string { return filepath.Join(mnts[i], "data") }})
	old := WaitLeader(t, nodes, 30*time.Second)
	ctx := context.Background()
	var acked []string
	for i := range 10 {
		m := fmt.Sprint("a", i)
		if err := old.Client().ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: m}).Err(); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, m)
	}
	var mnt string
	for i, n := range nodes {
		if n == old {
			mnt = mnts[i]
		}
	}
	ballast := testutil.FillDisk(t, mnt)
	oc := old.Client()
	for i := 0; ; i++ {
		m := fmt.Sprint("b", i)
		err := oc.ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: m}).Err()
		if err == nil {
			acked = append(acked, m)
			continue
		}
		if err.Error() != misconfENOSPC {
			t.Fatalf("write through the full leader: %v, want %q", err, misconfENOSPC)
		}
		break
	}
	var leader *ClusterNode
	testutil.Eventually(t, 30*time.Second, func() error {
		leader = WaitLeader(t, nodes, 30*time.Second)
		if leader == old {
			return errors.New("the full node still leads")
		}
		return nil
	})
	for i := range 10 {
		m := fmt.Sprint("c", i)
		if err := leader.Client().ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: m}).Err(); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, m)
	}
	if err := oc.ZAdd(ctx, "k", redis.Z{Score: 1, Member: "refused"}).Err(); err == nil || err.Error() != misconfENOSPC {
		t.Fatalf("write through the full node: %v", err)
	}
	if s := infoField(t, oc, "persistence", "aof_last_write_status"); s != "err" {
		t.Fatalf("full node aof_last_write_status:%s", s)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 90*time.Second, func() error {
		return oc.ZAdd(ctx, "k", redis.Z{Score: 1, Member: "healed"}).Err()
	})
	acked = append(acked, "healed")
	waitCaughtUp(t, nodes, WaitLeader(t, nodes, 30*time.Second))
	for _, n := range nodes {
		checkMembers(t, n.Client(), acked)
	}
}

// snapshotDirs lists a data directory's retained snapshots, newest first.
func snapshotDirs(t testing.TB, data string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(data, "snapshots", "snapshots"))
	var ids []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasSuffix(e.Name(), ".tmp") {
			ids = append(ids, e.Name())
		}
	}
	// term-index-millis: newest first.
	key := func(id string) [3]uint64 {
		var k [3]uint64
		for i, p := range strings.SplitN(id, "-", 3) {
			k[i], _ = strconv.ParseUint(p, 10, 64)
		}
		return k
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := key(ids[i]), key(ids[j])
		for k := range a {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return false
	})
	return ids
}

// TestCorruptSnapshotRestart: a node killed after two snapshots, whose
// newest snapshot is then damaged, restarts from the older snapshot and
// the log it kept, with every acknowledged write; it does not panic (as
// it did with --log-store bolt when the log had been compacted past the
// older snapshot).
func TestCorruptSnapshotRestart(t *testing.T) {
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) {
			g := StartGoblind(t, NodeOptions{Args: []string{"--log-store", store, "--snapshot-threshold", "50", "--snapshot-interval", "100ms"}})
			c := g.Client()
			ctx := context.Background()
			n := 0
			write := func(k int) {
				for range k {
					if err := c.ZAdd(ctx, "k", redis.Z{Score: float64(n), Member: fmt.Sprint("m", n)}).Err(); err != nil {
						t.Fatal(err)
					}
					n++
				}
			}
			testutil.Eventually(t, 60*time.Second, func() error {
				write(20)
				if ids := snapshotDirs(t, g.Data); len(ids) < 2 {
					return fmt.Errorf("snapshots %v", ids)
				}
				return nil
			})
			write(20)
			g.Kill()
			ids := snapshotDirs(t, g.Data)
			state := filepath.Join(g.Data, "snapshots", "snapshots", ids[0], "state.bin")
			b, err := os.ReadFile(state)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x08
			if err := os.WriteFile(state, b, 0o644); err != nil {
				t.Fatal(err)
			}
			g.Restart()
			c = g.Client()
			if got, err := c.ZCard(ctx, "k").Result(); err != nil || got != int64(n) {
				t.Fatalf("ZCARD after the restart = %d, %v; want %d", got, err, n)
			}
			if !strings.Contains(g.Log(), "a snapshot is corrupt") {
				t.Fatalf("the log does not tell of the corrupt snapshot:\n%s", g.Log())
			}
			write(10)
		})
	}
}

// segmentBatch returns the bytes of a log batch as node/wal writes it,
// holding one entry with data: made with the wal package in a scratch
// directory.
func segmentBatch(t *testing.T, data []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	l, err := wal.Open(dir, wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.StoreLog(&raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, fmt.Sprintf("%020d.seg", 1))
	before, _ := os.ReadFile(seg)
	if err := l.StoreLog(&raft.Log{Index: 2, Term: 1, Type: raft.LogCommand, Data: data}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(seg)
	return after[len(before):]
}

// TestTornWriteWithBatchLikeMember: members that hold whole log batches
// are written and acknowledged, then the node is killed while writing
// another such batch (its tail torn). It restarts, cutting only the torn
// write, with every acknowledged member.
func TestTornWriteWithBatchLikeMember(t *testing.T) {
	g := StartGoblind(t, NodeOptions{})
	c := g.Client()
	ctx := context.Background()
	crafted := segmentBatch(t, []byte("planted"))
	members := []string{"plain", string(crafted), string(crafted) + string(crafted)}
	for i, m := range members {
		if err := c.ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: m}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	g.Kill()
	segs, _ := filepath.Glob(filepath.Join(g.Data, "raft-wal", "*.seg"))
	sort.Strings(segs)
	last := segs[len(segs)-1]
	outer := segmentBatch(t, []byte(string(crafted)+"tail"))
	for _, cut := range []int{len(outer) / 3, len(outer) - 3} {
		f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(outer[:cut])
		f.Close()
		g.Restart()
		checkMembers(t, g.Client(), members)
		if !strings.Contains(g.Log(), "cutting a torn final write") {
			t.Fatalf("no torn write was cut:\n%s", g.Log())
		}
		g.Kill()
	}
}

// TestSnapshotDiskFull: the snapshot directory's file system (a tmpfs)
// is too small: snapshots fail, INFO says so, writes go on; once it has
// room a snapshot succeeds without a restart.
func TestSnapshotDiskFull(t *testing.T) {
	data := t.TempDir()
	snaps := filepath.Join(data, "snapshots")
	testutil.MountTmpfs(t, snaps, 64<<10)
	g := StartGoblind(t, NodeOptions{Data: data, Args: []string{"--snapshot-threshold", "100", "--snapshot-interval", "100ms"}})
	c := g.Client()
	ctx := context.Background()
	big := strings.Repeat("x", 1000)
	n := 0
	testutil.Eventually(t, 60*time.Second, func() error {
		for range 50 {
			if err := c.ZAdd(ctx, "k", redis.Z{Score: float64(n), Member: fmt.Sprint(big, n)}).Err(); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if s := infoField(t, c, "persistence", "rdb_last_bgsave_status"); s != "err" {
			return fmt.Errorf("rdb_last_bgsave_status:%s", s)
		}
		return nil
	})
	if e := infoField(t, c, "persistence", "goblin_snapshot_error"); !strings.Contains(e, "no space left on device") {
		t.Fatalf("goblin_snapshot_error:%s", e)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=64m", snaps).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	testutil.Eventually(t, 60*time.Second, func() error {
		if err := c.ZAdd(ctx, "k", redis.Z{Score: float64(n), Member: fmt.Sprint(big, n)}).Err(); err != nil {
			t.Fatal(err)
		}
		n++
		if s := infoField(t, c, "persistence", "rdb_last_bgsave_status"); s != "ok" {
			return fmt.Errorf("rdb_last_bgsave_status:%s", s)
		}
		return nil
	})
	g.Kill()
	g.Restart()
	if got, err := g.Client().ZCard(ctx, "k").Result(); err != nil || got != int64(n) {
		t.Fatalf("ZCARD after the restart = %d, %v; want %d", got, err, n)
	}
}

// compactLog writes to a key of its own on the leader until it has taken
// two snapshots: the log keeps every entry after the older of its two
// snapshots (docs/operations.md), so only then is it compacted, and a
// follower that missed the entries before must install a snapshot.
func compactLog(t testing.TB, leader *ClusterNode) {
	t.Helper()
	c := leader.Client()
	first, n := "", 0
	testutil.Eventually(t, 60*time.Second, func() error {
		for range 20 {
			if err := c.ZAdd(context.Background(), "compact-log-filler", redis.Z{Score: float64(n), Member: fmt.Sprint(n)}).Err(); err != nil {
				return err
			}
			n++
		}
		s := raftStat(t, leader, "last_snapshot_index")
		if first == "" && s != "0" {
			first = s
		}
		if s == "0" || s == first {
			return fmt.Errorf("snapshots: last at %s", s)
		}
		return nil
	})
}
