package metrics

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/servetest"
	gtestutil "github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/node"
)

// TestNamesFollowConventions runs Prometheus's own linter over every
// metric.
func TestNamesFollowConventions(t *testing.T) {
	s, n := servetest.Start(t, node.Config{Fsync: node.FsyncAlways})
	c := redis.NewClient(&redis.Options{Addr: s.Addr().String()})
	defer c.Close()
	c.ZAdd(t.Context(), "k", redis.Z{Score: 1, Member: "a"})
	problems, err := testutil.CollectAndLint(NewCollector(s, n, "7.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// TestScrape serves the endpoint and checks figures against what the test
// did, under both fsync modes.
func TestScrape(t *testing.T) {
	for _, fsync := range []node.Fsync{node.FsyncAlways, node.FsyncEverysec} {
		t.Run(fsync.String(), func(t *testing.T) { testScrape(t, fsync) })
	}
}

func testScrape(t *testing.T, fsync node.Fsync) {
	s, n := servetest.Start(t, node.Config{Fsync: fsync})
	ms, err := Listen(Config{Addr: "127.0.0.1:0"}, NewCollector(s, n, "7.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	ms.Serve(func(err error) { t.Error(err) })
	defer ms.Close()
	var body string
	get := func() {
		t.Helper()
		r, err := http.Get("http://" + ms.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		body = string(b)
	}
	value := func(series string) float64 {
		t.Helper()
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, series+" "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
		}
		t.Fatalf("no %s in:\n%s", series, body)
		return 0
	}
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: s.Addr().String(), PoolSize: 1})
	defer c.Close()
	for i := range 10 {
		if err := c.ZAdd(ctx, "k", redis.Z{Score: float64(i), Member: strconv.Itoa(i)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A pipeline: one entry of several commands.
	pipe := c.Pipeline()
	for i := range 5 {
		pipe.ZAdd(ctx, "p", redis.Z{Score: 1, Member: strconv.Itoa(i)})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c.ZIncrBy(ctx, "k", 1, "x")
	// go-redis's handshake may have had errors of its own.
	get()
	errs := value(`goblin_error_replies_total{code="ERR"}`)
	c.Do(ctx, "ZADD", "k", "nan", "x") // an error reply
	c.ZScore(ctx, "k", "1")
	c.ZScore(ctx, "missing", "1")
	clients := len(strings.Split(strings.TrimSpace(c.ClientList(ctx).Val()), "\n"))

	if fsync == node.FsyncEverysec {
		// The sync runs once a second.
		deadline := time.Now().Add(5 * time.Second)
		for get(); value("goblin_raft_log_synced_commands_total") < 16 && time.Now().Before(deadline); get() {
			time.Sleep(100 * time.Millisecond)
		}
	} else {
		get()
	}
	st := n.Status()
	want := map[string]float64{
		`goblin_commands_total{command="zadd"}`:                 16,
		`goblin_command_errors_total{command="zadd"}`:           1,
		`goblin_command_duration_seconds_count{command="zadd"}`: 16,
		`goblin_commands_total{command="zscore"}`:               2,
		`goblin_keyspace_hits_total`:                            1,
		`goblin_keyspace_misses_total`:                          1,
		`goblin_error_replies_total{code="ERR"}`:                errs + 1,
		`goblin_db_keys{db="db0"}`:                              2,
		`goblin_db_members{db="db0"}`:                           16,
		`goblin_raft_state{state="Leader"}`:                     1,
		`goblin_raft_state{state="Follower"}`:                   0,
		`goblin_raft_term`:                                      float64(st.Term),
		`goblin_raft_leader_changes_total`:                      1,
		`goblin_gossip_members{state="alive"}`:                  1,
		`goblin_raft_log_synced_commands_total`:                 16,
		`goblin_connected_clients`:                              float64(clients),
	}
	for series, w := range want {
		if got := value(series); got != w {
			t.Errorf("%s = %v, want %v", series, got, w)
		}
	}
	// The indexes move on (the leader's own entries); they are at least
	// what the status said before the scrape.
	if got := value("goblin_raft_commit_index"); got < float64(st.CommitIndex) || got == 0 {
		t.Errorf("goblin_raft_commit_index %v, status %d", got, st.CommitIndex)
	}
	// 12 write entries (10, a pipeline of 5, ZINCRBY) at least, each
	// appended and made durable.
	if got := value("goblin_raft_log_synced_entries_total"); got < 12 {
		t.Errorf("goblin_raft_log_synced_entries_total %v", got)
	}
	// One client, one entry in flight at a time: nothing was held.
	if got := value("goblin_raft_group_commit_overdue_total"); got != 0 {
		t.Errorf("goblin_raft_group_commit_overdue_total %v", got)
	}
	fsyncs := value("goblin_raft_log_fsync_duration_seconds_count")
	if fsyncs < 1 {
		t.Errorf("%v fsyncs", fsyncs)
	}
	// A cluster's leader syncs its appends beside replication, one
	// fdatasync for whatever was appended meanwhile: no more fsyncs than
	// appends.
	if fsync == node.FsyncAlways && value("goblin_raft_log_append_duration_seconds_count") < fsyncs {
		t.Errorf("fsync always: %v appends, %v fsyncs", value("goblin_raft_log_append_duration_seconds_count"), fsyncs)
	}
	if !strings.Contains(body, "\ngo_goroutines ") || !strings.Contains(body, "\nprocess_resident_memory_bytes ") {
		t.Error("no Go runtime or process metrics")
	}
}

// TestExpiredKeys: a key that expires counts, on the endpoint and in
// INFO.
func TestExpiredKeys(t *testing.T) {
	s, n := servetest.Start(t, node.Config{Fsync: node.FsyncEverysec})
	c := redis.NewClient(&redis.Options{Addr: s.Addr().String()})
	defer c.Close()
	ctx := t.Context()
	c.ZAdd(ctx, "gone", redis.Z{Score: 1, Member: "a"})
	c.ZAdd(ctx, "kept", redis.Z{Score: 1, Member: "a"})
	if err := c.PExpire(ctx, "gone", 20*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	col := NewCollector(s, n, "")
	gtestutil.Poll(t, 10*time.Second, "goblin_expired_keys_total to reach 1", func() bool {
		return testutil.ToFloat64(onlyDesc{col, dExpired}) == 1
	})
	if info := c.Info(ctx, "stats").Val(); !strings.Contains(info, "\r\nexpired_keys:1\r\n") {
		t.Errorf("INFO stats: %q", info)
	}
}

// onlyDesc collects one metric of a collector.
type onlyDesc struct {
	c *Collector
	d *prometheus.Desc
}

func (o onlyDesc) Describe(ch chan<- *prometheus.Desc) { ch <- o.d }

func (o onlyDesc) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric, 256)
	go func() { o.c.Collect(all); close(all) }()
	for m := range all {
		if m.Desc() == o.d {
			ch <- m
		}
	}
}

// TestListenPlainHTTP: the endpoint serves whatever address it is given;
// goblind decides which ones are allowed.
func TestListenPlainHTTP(t *testing.T) {
	s, n := servetest.Start(t, node.Config{Fsync: node.FsyncEverysec})
	ms, err := Listen(Config{Addr: "127.0.0.1:0"}, NewCollector(s, n, "7.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	ms.Serve(func(error) {})
	if _, _, err := net.SplitHostPort(ms.Addr().String()); err != nil {
		t.Fatal(err)
	}
	ms.Close()
	if _, err := http.Get("http://" + ms.Addr().String() + "/metrics"); err == nil {
		t.Error("still serving after Close")
	}
}
