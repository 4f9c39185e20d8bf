package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/rdb"
)

// DUMP and RESTORE between Goblin and a real redis-server ($REDIS_SERVER,
// default redis-server on PATH), and MIGRATE from redis-server into
// goblind. Sets of both Redis encodings (listpack up to 128 members of up
// to 64 bytes, skiplist beyond) with tricky scores and binary, long and
// integer members must cross in both directions with identical members
// and scores.

// zsetFill is one sorted set written into a server by ZADD.
type zsetFill struct {
	key     string
	members []redis.Z
	ttlMS   int64
}

// zsetFills builds sets of both encodings with scores and members that
// test the encodings' corners.
func zsetFills(r *rand.Rand) []zsetFill {
	tricky := []float64{math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e-300, -1e300, 0.1, 1.5, 1 << 62, 1<<62 + 4096, 3.14159e-7, 123456789012}
	member := func(i int) string {
		switch i % 6 {
		case 0:
			return strconv.Itoa(i)
		case 1:
			return strconv.Itoa(-i * 1000003)
		case 2:
			return "bin\x00\r\n" + string(rune(i)) + "\xff"
		case 3:
			return strings.Repeat("long-compressible-", 1+i%40) + strconv.Itoa(i)
		case 4:
			b := make([]byte, 20+r.IntN(60))
			for j := range b {
				b[j] = byte(r.IntN(256))
			}
			return string(b) + strconv.Itoa(i)
		}
		return "m" + strconv.Itoa(i)
	}
	build := func(key string, n int, short bool, ttl int64) zsetFill {
		f := zsetFill{key: key, ttlMS: ttl}
		for i := range n {
			m := member(i)
			if short && len(m) > 64 {
				m = m[:60] + strconv.Itoa(i%1000)
			}
			var s float64
			switch i % 3 {
			case 0:
				s = tricky[i%len(tricky)]
			case 1:
				s = float64(i%50) - 25
			default:
				s = r.NormFloat64() * 1e9
			}
			f.members = append(f.members, redis.Z{Score: s, Member: m})
		}
		return f
	}
	return []zsetFill{
		build("lp:1", 1, true, 0),
		build("lp:10", 10, true, 0),
		build("lp:128", 128, true, 0),
		build("lp:ttl", 20, true, 3_600_000),
		build("sk:129", 129, true, 0),
		build("sk:long", 30, false, 0),
		build("sk:2000", 2000, false, 0),
		build("sk:ttl", 300, false, 7_200_000),
		{key: "ints", members: []redis.Z{{Score: 1, Member: "10"}, {Score: 1, Member: "9"}, {Score: 1, Member: "-5"}, {Score: 2, Member: "9223372036854775807"}}},
	}
}

func fillRedis(t *testing.T, ctx context.Context, c *redis.Client, fills []zsetFill) {
	t.Helper()
	for _, f := range fills {
		for i := 0; i < len(f.members); i += 500 {
			if err := c.ZAdd(ctx, f.key, f.members[i:min(i+500, len(f.members))]...).Err(); err != nil {
				t.Fatalf("ZADD %s: %v", f.key, err)
			}
		}
		if f.ttlMS > 0 {
			if err := c.PExpire(ctx, f.key, time.Duration(f.ttlMS)*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// zrangeAll returns key's members and scores as text: members as they
// are, scores by their bits, so -0 and 0 differ.
func zrangeAll(t *testing.T, ctx context.Context, c *redis.Client, key string) []string {
	t.Helper()
	zs, err := c.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil {
		t.Fatalf("ZRANGE %q: %v", key, err)
	}
	out := make([]string, 0, len(zs))
	for _, z := range zs {
		out = append(out, fmt.Sprintf("%q=%016x", z.Member, math.Float64bits(z.Score)))
	}
	return out
}

func sameList(a, b []string) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d members, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("entry %d: %s, want %s", i, a[i], b[i])
		}
	}
	return nil
}

// restamp gives a payload another RDB version (and a checksum to match).
func restamp(p []byte, version uint16) []byte {
	q := bytes.Clone(p[:len(p)-10])
	q = binary.LittleEndian.AppendUint16(q, version)
	return binary.LittleEndian.AppendUint64(q, rdb.CRC64(0, q))
}

func TestDumpRestoreWithRedis(t *testing.T) {
	ctx := context.Background()
	rs := testutil.StartRedis(t)
	version := rs.Version
	g := StartGoblind(t, NodeOptions{})
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr, Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	gc := g.Client(func(o *redis.Options) { o.Protocol = 2 })
	seed := rand.Uint64()
	t.Logf("seed %d, redis %s", seed, version)
	fills := zsetFills(rand.New(rand.NewPCG(seed, 0)))
	fillRedis(t, ctx, rc, fills)

	for _, f := range fills {
		// Redis to Goblin.
		p, err := rc.Dump(ctx, f.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := rc.ObjectEncoding(ctx, f.key).Result()
		ttl := time.Duration(0)
		if f.ttlMS > 0 {
			ttl = time.Duration(f.ttlMS) * time.Millisecond
		}
		if err := gc.Restore(ctx, f.key, ttl, p).Err(); err != nil {
			t.Fatalf("%s (%s): RESTORE in goblind: %v", f.key, enc, err)
		}
		want := zrangeAll(t, ctx, rc, f.key)
		if err := sameList(zrangeAll(t, ctx, gc, f.key), want); err != nil {
			t.Fatalf("%s (%s) restored in goblind: %v", f.key, enc, err)
		}
		if f.ttlMS > 0 {
			if pttl := gc.PTTL(ctx, f.key).Val(); pttl <= 0 || pttl > ttl {
				t.Fatalf("%s: PTTL %v in goblind, want up to %v", f.key, pttl, ttl)
			}
		}

		// Goblin to Redis.
		gp, err := gc.Dump(ctx, f.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !atLeast72(version) {
			// Redis 7.0 refuses RDB 11 payloads (Redis 7.2's own too):
			// the encoding is one it reads, so give it its version.
			if err := rc.Restore(ctx, "refused", 0, gp).Err(); err == nil || err.Error() != "ERR DUMP payload version or checksum are wrong" {
				t.Fatalf("Redis %s on an RDB 11 payload: %v", version, err)
			}
			gp = string(restamp([]byte(gp), 10))
		}
		back := "back:" + f.key
		if err := rc.Restore(ctx, back, 0, gp).Err(); err != nil {
			t.Fatalf("%s: RESTORE of goblind's DUMP in redis: %v", f.key, err)
		}
		if err := sameList(zrangeAll(t, ctx, rc, back), want); err != nil {
			t.Fatalf("%s: goblind's DUMP restored in redis: %v", f.key, err)
		}
		if benc, _ := rc.ObjectEncoding(ctx, back).Result(); benc != enc && f.key != "ints" {
			t.Fatalf("%s: encoding %s after the round trip, was %s", f.key, benc, enc)
		}
	}
}

// TestDumpBytesAsRedis72: for sets Redis 7.2 builds by ZADD, Goblin's DUMP
// is byte for byte Redis's, when no string in it is long enough for LZF
// (whose output in Redis also depends on memory left by earlier calls).
func TestDumpBytesAsRedis72(t *testing.T) {
	ctx := context.Background()
	rs := testutil.StartRedis(t)
	version := rs.Version
	if !atLeast72(version) {
		t.Skipf("redis %s: DUMP payloads of RDB 11 need Redis 7.2", version)
	}
	g := StartGoblind(t, NodeOptions{})
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1})
	defer rc.Close()
	gc := g.Client()
	sets := map[string][]redis.Z{
		"a": {{Score: 1, Member: "a"}},
		"b": {{Score: -0.5, Member: "x"}, {Score: 3, Member: "7"}},
		"c": {{Score: 1e-300, Member: "x"}},
	}
	big := make([]redis.Z, 300)
	for i := range big {
		big[i] = redis.Z{Score: float64(i%17) / 4, Member: "k" + strconv.Itoa(i)}
	}
	big = append(big, redis.Z{Score: math.Inf(-1), Member: "-12"}, redis.Z{Score: 0.1, Member: "123456789012"})
	sets["big"] = big
	for k, zs := range sets {
		for _, c := range []*redis.Client{rc, gc} {
			if err := c.ZAdd(ctx, k, zs...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := rc.Dump(ctx, k).Result()
		got, _ := gc.Dump(ctx, k).Result()
		if got != want {
			t.Errorf("DUMP %s:\n goblind %q\n   redis %q", k, got, want)
		}
	}
}

func TestMigrateFromRedis(t *testing.T) {
	ctx := context.Background()
	rs := testutil.StartRedis(t)
	version := rs.Version
	const pass = "migrate-secret"
	g := StartGoblind(t, NodeOptions{Args: []string{"--requirepass", pass}, Password: pass})
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr, Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	gc := g.Client(func(o *redis.Options) { o.Protocol = 2 })
	seed := rand.Uint64()
	t.Logf("seed %d, redis %s", seed, version)
	fills := zsetFills(rand.New(rand.NewPCG(seed, 0)))
	fillRedis(t, ctx, rc, fills)
	want := map[string][]string{}
	var keys []any
	for _, f := range fills {
		want[f.key] = zrangeAll(t, ctx, rc, f.key)
		keys = append(keys, f.key)
	}
	host, port := "127.0.0.1", portOf(t, g.Addr)

	// Several keys at once, into database 0, with AUTH: Redis sends AUTH,
	// then its RESTOREs, pipelined.
	args := append([]any{"MIGRATE", host, port, "", 0, 5000, "AUTH", pass, "KEYS"}, keys...)
	if err := rc.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("MIGRATE: %v", err)
	}
	for _, f := range fills {
		if err := sameList(zrangeAll(t, ctx, gc, f.key), want[f.key]); err != nil {
			t.Fatalf("%s migrated: %v", f.key, err)
		}
		if f.ttlMS > 0 && gc.PTTL(ctx, f.key).Val() <= 0 {
			t.Fatalf("%s migrated without its TTL", f.key)
		}
		if n := rc.Exists(ctx, f.key).Val(); n != 0 {
			t.Fatalf("%s still in redis after MIGRATE", f.key)
		}
	}

	// One key into database 3 (Redis sends SELECT), COPY and REPLACE.
	fillRedis(t, ctx, rc, fills[:1])
	k := fills[0].key
	for range 2 { // the second time the key exists: REPLACE
		if err := rc.Do(ctx, "MIGRATE", host, port, k, 3, 5000, "COPY", "REPLACE", "AUTH", pass).Err(); err != nil {
			t.Fatalf("MIGRATE to db 3: %v", err)
		}
	}
	g3 := g.Client(func(o *redis.Options) { o.Protocol = 2; o.DB = 3 })
	if err := sameList(zrangeAll(t, ctx, g3, k), want[k]); err != nil {
		t.Fatalf("%s migrated to db 3: %v", k, err)
	}
	// Without REPLACE the existing key refuses, as between two Redis.
	err := rc.Do(ctx, "MIGRATE", host, port, k, 3, 5000, "COPY", "AUTH", pass).Err()
	if err == nil || !strings.Contains(err.Error(), "BUSYKEY") {
		t.Fatalf("MIGRATE onto an existing key: %v", err)
	}

	// A key of another type: Goblin answers Bad data format, and Redis
	// keeps the key.
	rc.Set(ctx, "str", "v", 0)
	err = rc.Do(ctx, "MIGRATE", host, port, "str", 0, 5000, "AUTH", pass).Err()
	if err == nil || err.Error() != "ERR Target instance replied with error: ERR Bad data format" {
		t.Fatalf("MIGRATE of a string: %v", err)
	}
	if rc.Exists(ctx, "str").Val() != 1 {
		t.Fatal("the string left redis after a failed MIGRATE")
	}
}

// TestRestoreThroughCluster: RESTOREs sent to a follower (forwarded to the
// leader, through the log) leave every node of a 3-node cluster with the
// same sets, in the layout the --packed rule gives; refused payloads are
// answered by the follower itself.
func TestRestoreThroughCluster(t *testing.T) {
	ctx := context.Background()
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3, Args: []string{"--packed", "ids:*=int64:float32"}})
	leader := WaitLeader(t, nodes, 30*time.Second)
	f := Followers(nodes, leader)[0]
	fc := f.Client(patient, func(o *redis.Options) { o.Protocol = 2 })
	sets := map[string]*rdb.Members{"names": {}, "ids:1": {}, "big": {}}
	for i := range 300 {
		if i < 50 {
			sets["names"].Member = append(sets["names"].Member, []byte("n"+strconv.Itoa(i)))
			sets["names"].Score = append(sets["names"].Score, float64(i)/3)
			sets["ids:1"].Member = append(sets["ids:1"].Member, []byte(strconv.Itoa(i*1000-7)))
			sets["ids:1"].Score = append(sets["ids:1"].Score, float64(i%8))
		}
		sets["big"].Member = append(sets["big"].Member, []byte("b"+strconv.Itoa(i)))
		sets["big"].Score = append(sets["big"].Score, rng.NormFloat64())
	}
	for k, m := range sets {
		if err := fc.Restore(ctx, k, time.Hour, string(rdb.AppendPayload(nil, m, nil))).Err(); err != nil {
			t.Fatalf("RESTORE %s through a follower: %v", k, err)
		}
	}
	bad := rdb.AppendPayload(nil, sets["names"], nil)
	bad[5] ^= 1
	if err := fc.Restore(ctx, "bad", 0, string(bad)).Err(); err == nil || err.Error() != "ERR DUMP payload version or checksum are wrong" {
		t.Fatalf("bad payload through a follower: %v", err)
	}
	if err := fc.Restore(ctx, "ids:2", 0, string(rdb.AppendPayload(nil, sets["names"], nil))).Err(); err == nil ||
		err.Error() != "ERR member is not valid for the key's packed layout" {
		t.Fatalf("names into a packed key: %v", err)
	}
	for k := range sets {
		var first string
		for _, n := range nodes {
			c := n.Client(patient)
			d, err := c.Dump(ctx, k).Result()
			if err != nil {
				t.Fatalf("DUMP %s on %s: %v", k, n.ID, err)
			}
			if first == "" {
				first = d
			} else if d != first {
				t.Fatalf("DUMP %s differs between nodes", k)
			}
			if enc := c.ObjectEncoding(ctx, k).Val(); (k == "ids:1") != (enc == "int64:float32") {
				t.Fatalf("%s on %s: layout %s", k, n.ID, enc)
			}
		}
		got := map[string]float64{}
		if _, err := rdb.DecodeZSet([]byte(first), func(m []byte, s float64) error { got[string(m)] = s; return nil }); err != nil {
			t.Fatal(err)
		}
		for i, m := range sets[k].Member {
			if got[string(m)] != sets[k].Score[i] {
				t.Fatalf("%s: member %s has score %v, want %v", k, m, got[string(m)], sets[k].Score[i])
			}
		}
	}
}
