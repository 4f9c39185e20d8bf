package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// goblind import against a real redis-server ($REDIS_SERVER, default
// redis-server on PATH): a server filled with sorted sets of both
// encodings (some expiring, some in another database, one over --big) and
// keys of every other type is imported live (--from) and from the RDB
// file its SAVE writes (--rdb); every sorted set must arrive with
// identical members, scores and expiry, the rest be reported skipped by
// type, and the node's --packed rules apply.

// otherFill writes keys of every other type and returns their number by
// TYPE name.
func otherFill(t *testing.T, ctx context.Context, c *redis.Client) map[string]int {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, "str:small", "v", 0).Err())
	must(c.Set(ctx, "str:int", "12345", 0).Err())
	must(c.Set(ctx, "str:long", strings.Repeat("compress me ", 100), 0).Err())
	must(c.Set(ctx, "str:ttl", "x", time.Hour).Err())
	must(c.RPush(ctx, "list:small", "a", "b", 1).Err())
	for i := range 3000 {
		must(c.RPush(ctx, "list:big", "item-"+strconv.Itoa(i)+strings.Repeat("y", i%50)).Err())
	}
	must(c.SAdd(ctx, "set:ints", 1, 2, 3).Err())
	must(c.SAdd(ctx, "set:small", "a", "b").Err())
	for i := range 1000 {
		must(c.SAdd(ctx, "set:big", "m"+strconv.Itoa(i)).Err())
	}
	must(c.HSet(ctx, "hash:small", "f", "v", "g", 1).Err())
	for i := range 1000 {
		must(c.HSet(ctx, "hash:big", "f"+strconv.Itoa(i), strings.Repeat("v", i%70)).Err())
	}
	for i := range 200 {
		must(c.XAdd(ctx, &redis.XAddArgs{Stream: "stream", Values: []any{"k", i, "long", strings.Repeat("s", i)}}).Err())
	}
	must(c.XGroupCreate(ctx, "stream", "g1", "0").Err())
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c1", Streams: []string{"stream", ">"}, Count: 10}).Err())
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c2", Streams: []string{"stream", ">"}, Count: 5}).Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: "stream:empty", Values: []any{"k", 1}}).Err())
	must(c.XTrimMaxLen(ctx, "stream:empty", 0).Err())
	must(c.Do(ctx, "FUNCTION", "LOAD", "#!lua name=importlib\nredis.register_function('f1', function() return 1 end)").Err())
	return map[string]int{"string": 4, "list": 2, "set": 3, "hash": 2, "stream": 2}
}

// importFixture is a redis-server holding the test data.
type importFixture struct {
	rc      *redis.Client
	version string
	fills   map[int][]zsetFill // by database
	others  map[string]int
	want    map[string][]string // "db/key" -> ZRANGE
	ttls    map[string]bool     // "db/key" of sets with a TTL
}

func newImportFixture(t *testing.T, ctx context.Context, rs *testutil.Redis, version string) *importFixture {
	seed := rand.Uint64()
	t.Logf("seed %d, redis %s", seed, version)
	r := rand.New(rand.NewPCG(seed, 0))
	f := &importFixture{version: version, fills: map[int][]zsetFill{}, want: map[string][]string{}, ttls: map[string]bool{}}
	f.rc = redis.NewClient(&redis.Options{Addr: rs.Addr, Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { f.rc.Close() })
	f.fills[0] = zsetFills(r)
	big := zsetFill{key: "sk:big", ttlMS: 5_400_000}
	for i := range 3000 {
		big.members = append(big.members, redis.Z{Score: float64(i%700) / 8, Member: "big-" + strconv.Itoa(i)})
	}
	f.fills[0] = append(f.fills[0], big,
		zsetFill{key: "ids:1", members: []redis.Z{{Score: 1, Member: "10"}, {Score: 2.5, Member: "-7"}, {Score: 2, Member: "9000000000"}}})
	f.fills[2] = zsetFills(r)[:3]
	for db, fills := range f.fills {
		c := redis.NewClient(&redis.Options{Addr: rs.Addr, Protocol: 2, DB: db, MaxRetries: -1})
		fillRedis(t, ctx, c, fills)
		for _, z := range fills {
			k := fmt.Sprintf("%d/%s", db, z.key)
			f.want[k] = zrangeAll(t, ctx, c, z.key)
			f.ttls[k] = z.ttlMS > 0
		}
		c.Close()
	}
	f.others = otherFill(t, ctx, f.rc)
	return f
}

// check compares every sorted set in goblind with Redis's.
func (f *importFixture) check(t *testing.T, ctx context.Context, g *Goblind, dbs []int) {
	t.Helper()
	for _, db := range dbs {
		gc := g.Client(func(o *redis.Options) { o.Protocol = 2; o.DB = db })
		n := 0
		for _, z := range f.fills[db] {
			k := fmt.Sprintf("%d/%s", db, z.key)
			if err := sameList(zrangeAll(t, ctx, gc, z.key), f.want[k]); err != nil {
				t.Fatalf("%s imported: %v", k, err)
			}
			pttl := gc.PTTL(ctx, z.key).Val()
			if f.ttls[k] != (pttl > 0) {
				t.Fatalf("%s: PTTL %v after import, TTL in redis: %v", k, pttl, f.ttls[k])
			}
			n++
		}
		if size := gc.DBSize(ctx).Val(); size != int64(n) {
			t.Fatalf("db %d: %d keys in goblind, want the %d sorted sets", db, size, n)
		}
	}
	gc := g.Client()
	if enc := gc.ObjectEncoding(ctx, "ids:1").Val(); enc != "int64:float64" {
		t.Fatalf("ids:1 imported with layout %q, want the --packed rule's", enc)
	}
}

// runImport runs goblind import and returns its report's fields.
func runImport(t *testing.T, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(goblindBin, append([]string{"import"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("goblind import %v: %v\n%s%s", args, err, out, stderr)
	}
	rep := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			rep[k] = v
		}
	}
	return rep
}

func (f *importFixture) totals(dbs []int) (keys, members int) {
	for _, db := range dbs {
		for _, z := range f.fills[db] {
			keys++
			members += len(z.members)
		}
	}
	return
}

func startImportTarget(t *testing.T) *Goblind {
	return StartGoblind(t, NodeOptions{Args: []string{"--packed", "ids:*=int64:float64", "--requirepass", "imp"}, Password: "imp"})
}

func TestImportRDB(t *testing.T) {
	ctx := context.Background()
	rs := testutil.StartRedis(t)
	version := rs.Version
	f := newImportFixture(t, ctx, rs, version)
	dir := f.rc.ConfigGet(ctx, "dir").Val()["dir"]
	if err := f.rc.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	g := startImportTarget(t)
	rep := runImport(t, "--rdb", filepath.Join(dir, "dump.rdb"), "--addr", g.Addr, "--requirepass", "imp", "--big", "1000", "--chunk", "333")
	keys, members := f.totals([]int{0, 2})
	if rep["imported keys"] != strconv.Itoa(keys) || rep["imported members"] != strconv.Itoa(members) || rep["failed keys"] != "0" {
		t.Fatalf("report %v, want %d keys, %d members", rep, keys, members)
	}
	skipped := 0
	var kinds []string
	for k, n := range f.others {
		skipped += n
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	if !strings.HasPrefix(rep["skipped keys"], strconv.Itoa(skipped)+" ") {
		t.Fatalf("skipped %q, want %d", rep["skipped keys"], skipped)
	}
	for _, k := range kinds {
		if !strings.Contains(rep["skipped keys"], k) {
			t.Fatalf("skipped %q, want %s", rep["skipped keys"], k)
		}
	}
	f.check(t, ctx, g, []int{0, 2})
}

func TestImportFromRedis(t *testing.T) {
	ctx := context.Background()
	rs := testutil.StartRedis(t)
	version := rs.Version
	f := newImportFixture(t, ctx, rs, version)
	g := startImportTarget(t)
	from := "redis://" + rs.Addr
	rep := runImport(t, "--from", from, "--addr", g.Addr, "--requirepass", "imp", "--big", "1000", "--chunk", "333", "--scan-count", "7")
	keys, members := f.totals([]int{0})
	if rep["imported keys"] != strconv.Itoa(keys) || rep["imported members"] != strconv.Itoa(members) || rep["failed keys"] != "0" {
		t.Fatalf("report %v, want %d keys, %d members", rep, keys, members)
	}
	for k, n := range f.others {
		if !strings.Contains(rep["skipped keys"], fmt.Sprintf("%s=%d", k, n)) {
			t.Fatalf("skipped %q, want %s=%d", rep["skipped keys"], k, n)
		}
	}
	// One database a run; the report names the others holding keys.
	if !slices.Contains(strings.Fields(rep["not imported"]), "2") {
		t.Fatalf("the report does not name database 2 as not imported: %v", rep)
	}
	rep = runImport(t, "--from", from+"/2", "--addr", g.Addr, "--requirepass", "imp")
	if rep["imported keys"] != strconv.Itoa(len(f.fills[2])) || !slices.Contains(strings.Fields(rep["not imported"]), "0") {
		t.Fatalf("db 2 report %v", rep)
	}
	f.check(t, ctx, g, []int{0, 2})

	// Resuming: from a cursor past the batches that returned at least one
	// sorted set, only the keys SCAN returns from there are imported.
	g2 := startImportTarget(t)
	zsets := map[string]bool{}
	for _, z := range f.fills[0] {
		zsets[z.key] = true
	}
	seen := map[string]bool{}
	var cursor uint64
	for {
		batch, next, err := f.rc.Scan(ctx, cursor, "", 5).Result()
		if err != nil || next == 0 {
			t.Fatalf("SCAN: %v, cursor %d, no batch before the last returned a sorted set", err, next)
		}
		for _, k := range batch {
			if zsets[k] {
				seen[k] = true
			}
		}
		cursor = next
		if len(seen) > 0 {
			break
		}
	}
	rep = runImport(t, "--from", from, "--addr", g2.Addr, "--requirepass", "imp", "--cursor", strconv.FormatUint(cursor, 10))
	n, _ := strconv.Atoi(rep["imported keys"])
	// SCAN may return a key twice (while Redis rehashes) but never skips one.
	if n >= keys || n < keys-len(seen) {
		t.Fatalf("import from cursor %d imported %d keys of %d; %d were returned before that cursor", cursor, n, keys, len(seen))
	}
	runImport(t, "--from", from, "--addr", g2.Addr, "--requirepass", "imp", "--cursor", "0")
	f.check(t, ctx, g2, []int{0})
}
