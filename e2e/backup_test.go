package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// goblindCmd runs a goblind subcommand and returns its exit code, stdout
// and stderr.
func goblindCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(goblindBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("goblind %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}

// backupInfo is what goblind backup and --verify print of a backup.
type backupInfo struct {
	index  uint64
	digest string
}

var (
	indexLine  = regexp.MustCompile(`(?m)^index:\s+(\d+) \(term (\d+)\)$`)
	digestLine = regexp.MustCompile(`(?m)^digest:\s+([0-9a-f]{64})$`)
)

func parseBackupInfo(t *testing.T, out string) backupInfo {
	t.Helper()
	im, dm := indexLine.FindStringSubmatch(out), digestLine.FindStringSubmatch(out)
	if im == nil || dm == nil || im[2] == "0" {
		t.Fatalf("no index, term and digest in:\n%s", out)
	}
	idx, _ := strconv.ParseUint(im[1], 10, 64)
	return backupInfo{index: idx, digest: dm[1]}
}

// digestOf asks a node for GOBLIN DIGEST.
func digestOf(ctx context.Context, c *redis.Client) (uint64, string, error) {
	v, err := c.Do(ctx, "GOBLIN", "DIGEST").Slice()
	if err != nil {
		return 0, "", err
	}
	if len(v) != 2 {
		return 0, "", fmt.Errorf("GOBLIN DIGEST answered %v", v)
	}
	idx, _ := v[0].(int64)
	sum, _ := v[1].(string)
	return uint64(idx), sum, nil
}

// waitDigest waits until every node answers the same index and the
// digest want.
func waitDigest(t *testing.T, want string, clients ...*redis.Client) uint64 {
	t.Helper()
	var index uint64
	testutil.Eventually(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		indexes := map[uint64]bool{}
		for i, c := range clients {
			idx, sum, err := digestOf(ctx, c)
			if err != nil {
				return fmt.Errorf("node %d: %v", i, err)
			}
			if sum != want {
				return fmt.Errorf("node %d at %d: digest %s, want %s", i, idx, sum, want)
			}
			indexes[idx] = true
			index = idx
		}
		if len(indexes) != 1 {
			return fmt.Errorf("the nodes are at different indexes: %v", indexes)
		}
		return nil
	})
	return index
}

// startSeededCluster starts a cluster of len(dirs) nodes on the given
// data directories (as StartCluster does, with --bootstrap-expect).
func startSeededCluster(t *testing.T, rng *rand.Rand, dirs []string, args ...string) []*ClusterNode {
	t.Helper()
	nodes := make([]*ClusterNode, len(dirs))
	var seeds []string
	for i := range nodes {
		nodes[i] = &ClusterNode{ID: fmt.Sprintf("r%d", i+1), Gossip: testutil.FreeAddr(t, "")}
		seeds = append(seeds, nodes[i].Gossip)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k, i := range rng.Perm(len(dirs)) {
		n, dir := nodes[i], dirs[i]
		delay := time.Duration(rng.IntN(300)) * time.Millisecond * time.Duration(k)
		a := append([]string{"--id", n.ID, "--gossip-addr", n.Gossip, "--join", strings.Join(seeds, ","),
			"--bootstrap-expect", strconv.Itoa(len(dirs)), "--log-level", "info", "--leave-on-shutdown=false"}, args...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			g := StartGoblind(t, NodeOptions{Data: dir, Args: a, NoWait: true})
			mu.Lock()
			n.Goblind = g
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, n := range nodes {
		n.WaitReady(45 * time.Second)
	}
	WaitLeader(t, nodes, 30*time.Second)
	return nodes
}

// A 3-node cluster is backed up from a follower and from the leader while
// clients write through every node. Each backup is consistent (every
// writer's members form a prefix holding every write acknowledged before
// the backup began) and restores into a new single node and into a new
// 3-node cluster (the file given to one node) whose nodes all answer the
// backup's digest at one index, with packed layouts, times to live and
// ACL users intact. --verify refuses a flipped byte and a cut file; a
// restore into a cluster with data is refused, and done with --force.
func TestBackupRestore(t *testing.T) {
	rng := testutil.Rand(t, 3)
	packedRule := []string{"--packed", "p:*=int32:float32"}
	src := StartCluster(t, rng, ClusterOptions{Size: 3, Args: packedRule})
	leader := WaitLeader(t, src, 30*time.Second)
	follower := Followers(src, leader)[0]
	ctx := context.Background()
	lc := leader.Client(patient)

	// What must survive: standard and packed sets, times to live, users.
	for _, cmd := range [][]any{
		{"ZADD", "std", "1.5", "a", "-2", "b", "3e10", "c"},
		{"ZADD", "p:ids", "1", "100", "2.5", "-7", "3", "2147483647"},
		{"ZCREATE", "u:ids", "uuid:float64", "0.25", "00112233-4455-6677-8899-aabbccddeeff"},
		{"ZADD", "ttl", "1", "x"},
		{"EXPIRE", "ttl", "3600"},
		{"SELECT", "0"},
		{"ACL", "SETUSER", "reader", "on", ">s3cret", "~*", "+@read"},
	} {
		if err := lc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}

	// Writers: writer w adds members 0, 1, 2, ... to w:<w>, one at a
	// time, through node w%3; acked[w] is the last one acknowledged.
	const writers = 3
	var acked [writers]atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		acked[w].Store(-1)
		c := src[w%3].Client(patient)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); !stop.Load(); i++ {
				key := fmt.Sprintf("w:%d", w)
				if err := c.ZAdd(ctx, key, redis.Z{Score: float64(i), Member: strconv.FormatInt(i, 10)}).Err(); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				acked[w].Store(i)
			}
		}()
	}
	testutil.Eventually(t, 30*time.Second, func() error {
		for w := range writers {
			if acked[w].Load() < 50 {
				return fmt.Errorf("writer %d at %d", w, acked[w].Load())
			}
		}
		return nil
	})

	dir := t.TempDir()
	files := map[string]string{"follower": filepath.Join(dir, "follower.gbk"), "leader": filepath.Join(dir, "leader.gbk")}
	infos := map[string]backupInfo{}
	for _, from := range []string{"follower", "leader"} {
		n := follower
		if from == "leader" {
			n = leader
		}
		var before [writers]int64
		for w := range writers {
			before[w] = acked[w].Load()
		}
		code, out, errOut := goblindCmd(t, "backup", "--addr", n.Addr, "-o", files[from])
		if code != 0 {
			t.Fatalf("backup from the %s: exit %d\n%s%s", from, code, out, errOut)
		}
		infos[from] = parseBackupInfo(t, out)
		checkConsistent(t, files[from], before[:])
	}
	stop.Store(true)
	wg.Wait()
	if infos["follower"].index >= infos["leader"].index {
		t.Errorf("the follower's backup is at %d, the later leader's at %d", infos["follower"].index, infos["leader"].index)
	}

	// --verify: the files verify; a flipped byte and a cut file do not.
	for from, f := range files {
		code, out, errOut := goblindCmd(t, "backup", "--verify", f)
		if code != 0 || parseBackupInfo(t, out) != infos[from] || !strings.Contains(out, "int32:float32: 1 keys, 3 members") ||
			!strings.Contains(out, "rule:      --packed 'p:*=int32:float32'") || !strings.Contains(out, "acl users: 2") {
			t.Fatalf("verify %s: exit %d\n%s%s", from, code, out, errOut)
		}
	}
	good, err := os.ReadFile(files["leader"])
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"flipped": flipByte(good, rng.IntN(len(good))),
		"cut":     good[:rng.IntN(len(good))],
	} {
		p := filepath.Join(dir, name+".gbk")
		os.WriteFile(p, bad, 0o644)
		code, _, errOut := goblindCmd(t, "backup", "--verify", p)
		if code == 0 || !(strings.Contains(errOut, "corrupt backup file") || strings.Contains(errOut, "not a goblin backup")) {
			t.Errorf("verify of a %s file: exit %d, %s", name, code, errOut)
		}
		// A refused restore into a new data directory leaves none.
		nd := filepath.Join(dir, name+"-data")
		if code, _, errOut := goblindCmd(t, "restore", p, "--data", nd); code == 0 {
			t.Errorf("restore of a %s file: exit 0, %s", name, errOut)
		}
		if _, err := os.Stat(nd); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a refused restore left %s behind: %v", nd, err)
		}
	}

	// A new single node from the leader's backup.
	single := t.TempDir()
	if code, out, errOut := goblindCmd(t, "restore", files["leader"], "--data", single); code != 0 {
		t.Fatalf("restore --data: exit %d\n%s%s", code, out, errOut)
	}
	one := StartGoblind(t, NodeOptions{Data: single, Args: packedRule})
	oc := one.Client(patient)
	waitDigest(t, infos["leader"].digest, oc)
	checkSurvivors(t, one)

	// A new 3-node cluster from the follower's backup, given to one node.
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	holder := rng.IntN(3)
	if code, out, errOut := goblindCmd(t, "restore", files["follower"], "--data", dirs[holder]); code != 0 {
		t.Fatalf("restore --data: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("the backup is given to r%d", holder+1)
	dst := startSeededCluster(t, rng, dirs, packedRule...)
	var clients []*redis.Client
	for _, n := range dst {
		clients = append(clients, n.Client(patient))
	}
	at := waitDigest(t, infos["follower"].digest, clients...)
	t.Logf("restored cluster: every node at index %d has digest %s (the backup was at %d)", at, infos["follower"].digest, infos["follower"].index)
	for _, n := range dst {
		checkSurvivors(t, n.Goblind)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "restore.pending")); err == nil {
			t.Errorf("%s still holds restore.pending", d)
		}
	}

	// The restored cluster holds data: a restore into it is refused, and
	// --force replaces its state with the leader's backup.
	target := dst[rng.IntN(3)]
	code, _, errOut := goblindCmd(t, "restore", files["leader"], "--addr", target.Addr)
	if code == 0 || !strings.Contains(errOut, "restore refused: the cluster holds data") {
		t.Fatalf("restore into a cluster with data: exit %d, %s", code, errOut)
	}
	waitDigest(t, infos["follower"].digest, clients...)
	if code, out, errOut := goblindCmd(t, "restore", files["leader"], "--addr", target.Addr, "--force"); code != 0 || strings.Contains(out, " 0 bytes uncompressed") {
		t.Fatalf("restore --force: exit %d\n%s%s", code, out, errOut)
	}
	waitDigest(t, infos["leader"].digest, clients...)
}

func flipByte(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x01
	return out
}

// checkConsistent restores nothing: it reads the backup into a scratch
// single node and checks each writer's members are 0..k with k at least
// the last write acknowledged before the backup began.
func checkConsistent(t *testing.T, file string, before []int64) {
	t.Helper()
	dir := t.TempDir()
	if code, out, errOut := goblindCmd(t, "restore", file, "--data", dir); code != 0 {
		t.Fatalf("restore --data: exit %d\n%s%s", code, out, errOut)
	}
	g := StartGoblind(t, NodeOptions{Data: dir})
	c := g.Client(patient)
	ctx := context.Background()
	testutil.Eventually(t, 30*time.Second, func() error {
		n, err := c.Exists(ctx, "std").Result()
		if err == nil && n != 1 {
			err = errors.New("not restored yet")
		}
		return err
	})
	for w, acked := range before {
		ms, err := c.ZRangeWithScores(ctx, fmt.Sprintf("w:%d", w), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			if m.Member != strconv.Itoa(i) || m.Score != float64(i) {
				t.Fatalf("writer %d: member %d is %v: the backup is not a prefix of its writes", w, i, m)
			}
		}
		if int64(len(ms))-1 < acked {
			t.Fatalf("writer %d: the backup holds members 0..%d, but %d was acknowledged before it began", w, len(ms)-1, acked)
		}
	}
	g.Stop()
}

// checkSurvivors checks the keys, layouts, times to live and users the
// source cluster was given.
func checkSurvivors(t *testing.T, g *Goblind) {
	t.Helper()
	ctx := context.Background()
	c := g.Client(patient)
	if got := fmt.Sprint(c.ZRangeWithScores(ctx, "std", 0, -1).Val()); got != "[{-2 b} {1.5 a} {3e+10 c}]" {
		t.Errorf("%s: std = %s", g.Addr, got)
	}
	if got := fmt.Sprint(c.ZRangeWithScores(ctx, "p:ids", 0, -1).Val()); got != "[{1 100} {2.5 -7} {3 2147483647}]" {
		t.Errorf("%s: p:ids = %s", g.Addr, got)
	}
	for key, want := range map[string]string{"p:ids": "int32:float32", "u:ids": "uuid:float64", "std": "standard"} {
		if got := goblinLayout(t, c, key); got != want {
			t.Errorf("%s: %s has layout %q, want %s", g.Addr, key, got, want)
		}
	}
	if ttl := c.TTL(ctx, "ttl").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("%s: ttl's time to live is %v", g.Addr, ttl)
	}
	r := g.Client(func(o *redis.Options) { o.Username, o.Password = "reader", "s3cret" })
	if got, err := r.ZScore(ctx, "std", "a").Result(); err != nil || got != 1.5 {
		t.Errorf("%s: the restored user reads %v, %v", g.Addr, got, err)
	}
	if err := r.ZAdd(ctx, "std", redis.Z{Score: 1, Member: "z"}).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("%s: the restored read-only user wrote: %v", g.Addr, err)
	}
}

// goblinLayout returns a key's layout as OBJECT ENCODING reports it.
func goblinLayout(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	v, err := c.Do(context.Background(), "OBJECT", "ENCODING", key).Text()
	if err != nil {
		t.Fatalf("OBJECT ENCODING %s: %v", key, err)
	}
	return v
}
