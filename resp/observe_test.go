package resp

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/command"
)

func TestSlowlog(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"CONFIG", "GET", "slowlog-*"}, "*4\r\n$23\r\nslowlog-log-slower-than\r\n$5\r\n10000\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n"},
		{[]string{"SLOWLOG", "LEN"}, ":0\r\n"},
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "-2"}, "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETNAME", "w1"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "1", strings.Repeat("m", 130)}, ":1\r\n"},
		{[]string{"SLOWLOG", "GET", "x"}, "-ERR count should be greater than or equal to -1\r\n"},
		{[]string{"SLOWLOG", "GET", "-2"}, "-ERR count should be greater than or equal to -1\r\n"},
		{[]string{"SLOWLOG", "FOO"}, "-ERR unknown subcommand 'FOO'. Try SLOWLOG HELP.\r\n"},
		{[]string{"SLOWLOG", "LEN", "x"}, "-ERR wrong number of arguments for 'slowlog|len' command\r\n"},
	})
	// Entries, newest first: the SLOWLOG GET errors, the ZADD (its member
	// cut at 128 bytes), CLIENT SETNAME, CONFIG SET.
	got := c.do("SLOWLOG", "GET", "4")
	addr := strings.TrimPrefix(regexp.MustCompile(`addr=(\S+)`).FindString(c.do("CLIENT", "INFO")), "addr=")
	zadd := regexp.MustCompile(`\*6\r\n:(\d+)\r\n:\d+\r\n:\d+\r\n\*4\r\n\$4\r\nZADD\r\n\$1\r\nk\r\n\$1\r\n1\r\n\$146\r\nm{128}\.\.\. \(2 more bytes\)\r\n\$\d+\r\n` +
		regexp.QuoteMeta(addr) + `\r\n\$2\r\nw1\r\n`)
	if !strings.HasPrefix(got, "*4\r\n") || !zadd.MatchString(got) {
		t.Fatalf("SLOWLOG GET 4 = %q", got)
	}
	if n := c.do("SLOWLOG", "LEN"); n == ":0\r\n" {
		t.Fatalf("SLOWLOG LEN = %q", n)
	}
	run(t, c, []exchange{
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "-1"}, "+OK\r\n"},
		{[]string{"SLOWLOG", "RESET"}, "+OK\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"SLOWLOG", "LEN"}, ":0\r\n"},
		{[]string{"SLOWLOG", "GET"}, "*0\r\n"},
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "2"}, "+OK\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"SLOWLOG", "LEN"}, ":2\r\n"},
	})
	// A command of more than 32 arguments keeps 31 and says how many more.
	argv := []string{"DEL"}
	for i := range 40 {
		argv = append(argv, "k"+strconv.Itoa(i))
	}
	c.do(argv...)
	got = c.do("SLOWLOG", "GET", "1")
	if !strings.Contains(got, "*32\r\n$3\r\nDEL\r\n") || !strings.Contains(got, "$23\r\n... (10 more arguments)\r\n") {
		t.Fatalf("SLOWLOG GET 1 after DEL of 40 keys = %q", got)
	}
	// AUTH's arguments are redacted.
	c.do("AUTH", "default", "secret")
	if got := c.do("SLOWLOG", "GET", "1"); strings.Contains(got, "secret") || !strings.Contains(got, "(redacted)") {
		t.Fatalf("SLOWLOG GET after AUTH = %q", got)
	}
}

func TestLatencyMonitor(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"CONFIG", "GET", "latency-monitor-threshold"}, "*2\r\n$25\r\nlatency-monitor-threshold\r\n$1\r\n0\r\n"},
		{[]string{"LATENCY", "LATEST"}, "*0\r\n"},
		{[]string{"LATENCY", "HISTORY", "command"}, "*0\r\n"},
		{[]string{"LATENCY", "RESET"}, ":0\r\n"},
		{[]string{"LATENCY", "LATEST", "x"}, "-ERR wrong number of arguments for 'latency|latest' command\r\n"},
		{[]string{"LATENCY", "HISTORY"}, "-ERR wrong number of arguments for 'latency|history' command\r\n"},
		{[]string{"CONFIG", "SET", "latency-monitor-threshold", "1"}, "+OK\r\n"},
	})
	// Commands that take over 1 ms: a ZADD of many members (fast) and a
	// ZRANGE of them all (not fast). A paused command's wait does not
	// count.
	argv := []string{"ZADD", "k"}
	for i := range 20000 {
		argv = append(argv, "1", "m"+strconv.Itoa(i))
	}
	c.do(argv...)
	// A read of them all takes a millisecond or more, once in a few tries
	// on a busy machine.
	for i := 0; i < 50 && !strings.Contains(c.do("LATENCY", "LATEST"), "$7\r\ncommand\r\n"); i++ {
		c.do("ZRANGE", "k", "0", "-1", "WITHSCORES")
	}
	run(t, c, []exchange{
		{[]string{"CLIENT", "PAUSE", "20", "ALL"}, "+OK\r\n"},
		{[]string{"ECHO", "x"}, "$1\r\nx\r\n"},
	})
	latest := c.do("LATENCY", "LATEST")
	if !regexp.MustCompile(`^\*2\r\n\*4\r\n\$7\r\ncommand\r\n:\d+\r\n:\d+\r\n:\d+\r\n\*4\r\n\$12\r\nfast-command\r\n:\d+\r\n:\d+\r\n:\d+\r\n$`).MatchString(latest) {
		t.Fatalf("LATENCY LATEST = %q", latest)
	}
	if h := c.do("LATENCY", "HISTORY", "fast-command"); !regexp.MustCompile(`^\*[12]\r\n\*2\r\n:`).MatchString(h) { // samples of one or two seconds
		t.Fatalf("LATENCY HISTORY = %q", h)
	}
	if d := c.do("LATENCY", "DOCTOR"); !strings.Contains(d, "fast-command") {
		t.Fatalf("LATENCY DOCTOR = %q", d)
	}
	run(t, c, []exchange{
		{[]string{"LATENCY", "RESET", "FAST-COMMAND", "nosuch"}, ":1\r\n"},
		{[]string{"LATENCY", "HISTORY", "fast-command"}, "*0\r\n"},
		{[]string{"LATENCY", "RESET"}, ":1\r\n"},
		{[]string{"LATENCY", "LATEST"}, "*0\r\n"},
	})
}

func TestMonitor(t *testing.T) {
	s, _ := startServer(t, Config{})
	m := dial(t, s)
	if got := m.do("MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR = %q", got)
	}
	c := dial(t, s)
	c.do("SELECT", "2")
	c.do("ZADD", "k", "1", "a\"b\n\x01\xff")
	c.do("CONFIG", "GET", "port") // admin: not shown
	c.do("MULTI")
	c.do("PING")
	c.do("EXEC")
	c.do("HELLO", "2", "AUTH", "default", "pw")
	addr := strings.TrimPrefix(regexp.MustCompile(`addr=(\S+)`).FindString(c.do("CLIENT", "INFO")), "addr=")
	for _, want := range []struct{ db, args string }{
		{"2", `"SELECT" "2"`}, // as Redis: after it ran
		{"2", `"ZADD" "k" "1" "a\\"b\\n\\x01\\xff"`},
		{"2", `"MULTI"`},
		{"2", `"PING"`},
		{"2", `"EXEC"`},
		{"2", `"HELLO" "2" "AUTH" "\(redacted\)" "\(redacted\)"`},
	} {
		line := m.read()
		re := regexp.MustCompile(`^\+\d{10}\.\d{6} \[` + want.db + ` ` + regexp.QuoteMeta(addr) + `\] ` + want.args + "\r\n$")
		if !re.MatchString(line) {
			t.Fatalf("monitor line %q, want %s", line, re)
		}
	}
	if !strings.Contains(c.do("CLIENT", "LIST"), " flags=O ") {
		t.Error("CLIENT LIST does not flag the monitor O")
	}
	m.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.monitors.n.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.monitors.n.Load(); n != 0 {
		t.Fatalf("%d monitors after the monitor closed", n)
	}
}

func TestClientKillPauseTime(t *testing.T) {
	s, _ := startServer(t, Config{})
	a, b, victim := dial(t, s), dial(t, s), dial(t, s)
	info := func(c *conn, field string) string {
		return strings.TrimPrefix(regexp.MustCompile(field+`=(\S+)`).FindString(c.do("CLIENT", "INFO")), field+"=")
	}
	vid, vaddr := info(victim, "id"), info(victim, "addr")
	if fd := info(victim, "fd"); fd == "-1" || fd == "" {
		t.Errorf("CLIENT INFO fd=%s", fd)
	}
	run(t, a, []exchange{
		{[]string{"CLIENT", "KILL", "1.2.3.4:5"}, "-ERR No such client\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "0"}, "-ERR client-id should be greater than 0\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "x"}, "-ERR client-id should be greater than 0\r\n"},
		{[]string{"CLIENT", "KILL", "TYPE", "foo"}, "-ERR Unknown client type 'foo'\r\n"},
		{[]string{"CLIENT", "KILL", "USER", "nobody"}, "-ERR No such user 'nobody'\r\n"},
		{[]string{"CLIENT", "KILL", "SKIPME", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "1", "ADDR"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "KILL", "FOO", "bar"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "KILL", "TYPE", "pubsub"}, ":0\r\n"},
		{[]string{"CLIENT", "KILL", "ID", vid, "LADDR", "1.1.1.1:1"}, ":0\r\n"},
		{[]string{"CLIENT", "KILL", "ID", vid, "USER", "default", "TYPE", "normal"}, ":1\r\n"},
		{[]string{"CLIENT", "KILL", vaddr}, "-ERR No such client\r\n"},
	})
	victim.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := victim.rd.ReadByte(); err == nil {
		t.Fatal("the killed connection is still open")
	}
	// The old form may kill the caller itself: it answers, then closes.
	if got := b.do("CLIENT", "KILL", info(b, "addr")); got != "+OK\r\n" {
		t.Fatalf("CLIENT KILL own addr = %q", got)
	}
	b.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := b.rd.ReadByte(); err == nil {
		t.Fatal("the connection that killed itself is still open")
	}

	// TIME: seconds and microseconds now.
	tm := a.do("TIME")
	parts := regexp.MustCompile(`^\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n$`).FindStringSubmatch(tm)
	if parts == nil {
		t.Fatalf("TIME = %q", tm)
	}
	if sec, _ := strconv.ParseInt(parts[1], 10, 64); sec < time.Now().Unix()-5 || sec > time.Now().Unix()+5 {
		t.Fatalf("TIME seconds %d", sec)
	}
	if us, _ := strconv.Atoi(parts[2]); us > 999999 {
		t.Fatalf("TIME microseconds %d", us)
	}

	// CLIENT PAUSE WRITE holds writes, not reads; UNPAUSE releases them.
	run(t, a, []exchange{
		{[]string{"CLIENT", "PAUSE", "x"}, "-ERR timeout is not an integer or out of range\r\n"},
		{[]string{"CLIENT", "PAUSE", "-1"}, "-ERR timeout is negative\r\n"},
		{[]string{"CLIENT", "PAUSE", "9223372036854775807"}, "-ERR timeout is out of range\r\n"},
		{[]string{"CLIENT", "PAUSE", "9223372036854775000", "WRITE"}, "-ERR timeout is out of range\r\n"},
		{[]string{"CLIENT", "REPLY", "foo"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "PAUSE", "100", "READS"}, "-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n"},
		{[]string{"CLIENT", "PAUSE", "60000", "WRITE"}, "+OK\r\n"},
	})
	w := dial(t, s)
	w.send(encode("ZADD", "k", "1", "a"))
	if got := a.do("ZCARD", "k"); got != ":0\r\n" {
		t.Fatalf("ZCARD during a write pause = %q", got)
	}
	w.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := w.rd.Peek(1); err == nil {
		t.Fatal("a write ran during CLIENT PAUSE WRITE")
	}
	run(t, a, []exchange{{[]string{"CLIENT", "UNPAUSE"}, "+OK\r\n"}})
	if got := w.read(); got != ":1\r\n" {
		t.Fatalf("ZADD after UNPAUSE = %q", got)
	}
	// A pause ends by itself.
	start := time.Now()
	run(t, a, []exchange{
		{[]string{"CLIENT", "PAUSE", "50"}, "+OK\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
	})
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("PING ran %v into a 50 ms pause", d)
	}
}

// BenchmarkObserveIdle measures what every command pays for observation
// when nobody monitors, no pause is on and the command is under the slow
// log's default threshold: the pause and monitor checks and the timing
// (one clock read).
func BenchmarkObserveIdle(b *testing.B) {
	s := NewServer(Config{}, newFakeBackend())
	c := &client{s: s, batchStart: time.Now()}
	spec := command.Find([]byte("zscore"))
	argv := [][]byte{[]byte("ZSCORE"), []byte("k"), []byte("m")}
	b.ReportAllocs()
	for b.Loop() {
		if s.pause.active.Load() {
			b.Fatal("paused")
		}
		s.monitors.feed(c, spec, argv)
		start := c.lastTick
		s.commandDone(c, argv, c.tick()-start)
	}
}

// The new commands are checked against ACL users by their Redis
// categories: SLOWLOG, LATENCY, MONITOR, CLIENT KILL and CLIENT PAUSE are
// @admin @dangerous, TIME is not.
func TestObservationCommandsACL(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"ACL", "SETUSER", "u", "on", "nopass", "+@all", "-@admin"}, "+OK\r\n"},
		{[]string{"AUTH", "u", "x"}, "+OK\r\n"},
		{[]string{"TIME", "x"}, "-ERR wrong number of arguments for 'time' command\r\n"},
		{[]string{"SLOWLOG", "GET"}, "-NOPERM User u has no permissions to run the 'slowlog|get' command\r\n"},
		{[]string{"LATENCY", "LATEST"}, "-NOPERM User u has no permissions to run the 'latency|latest' command\r\n"},
		{[]string{"MONITOR"}, "-NOPERM User u has no permissions to run the 'monitor' command\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "1"}, "-NOPERM User u has no permissions to run the 'client|kill' command\r\n"},
		{[]string{"CLIENT", "PAUSE", "10"}, "-NOPERM User u has no permissions to run the 'client|pause' command\r\n"},
		{[]string{"CLIENT", "UNPAUSE"}, "-NOPERM User u has no permissions to run the 'client|unpause' command\r\n"},
		{[]string{"ACL", "DRYRUN", "u", "TIME"}, "-NOPERM User u has no permissions to run the 'acl|dryrun' command\r\n"},
	})
	if got := c.do("TIME"); !strings.HasPrefix(got, "*2\r\n") {
		t.Fatalf("TIME as a user without @admin = %q", got)
	}
}

// Cluster mode is reported one way: INFO's redis_mode and cluster_enabled,
// CONFIG GET cluster-enabled and HELLO's mode agree.
func TestClusterModeReportedOneWay(t *testing.T) {
	for _, clustered := range []bool{false, true} {
		fb := newFakeBackend()
		fb.clustered = clustered
		s := NewServer(Config{Addr: "127.0.0.1:0"}, fb)
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		s.Serve()
		t.Cleanup(func() { s.Close() })
		c := dial(t, s)
		mode, enabled, yes := "standalone", "0", "no"
		if clustered {
			mode, enabled, yes = "cluster", "1", "yes"
		}
		if info := c.do("INFO", "server"); !strings.Contains(info, "\r\nredis_mode:"+mode+"\r\n") {
			t.Errorf("clustered %v: INFO server lacks redis_mode:%s: %q", clustered, mode, info)
		}
		if info := c.do("INFO", "cluster"); !strings.Contains(info, "\r\ncluster_enabled:"+enabled+"\r\n") {
			t.Errorf("clustered %v: INFO cluster = %q", clustered, info)
		}
		run(t, c, []exchange{{[]string{"CONFIG", "GET", "cluster-enabled"},
			"*2\r\n$15\r\ncluster-enabled\r\n$" + strconv.Itoa(len(yes)) + "\r\n" + yes + "\r\n"}})
		if hello := c.do("HELLO", "3"); !strings.Contains(hello, "$4\r\nmode\r\n$"+strconv.Itoa(len(mode))+"\r\n"+mode+"\r\n") {
			t.Errorf("clustered %v: HELLO = %q", clustered, hello)
		}
	}
}

// The slow log keeps the newest slowlog-max-len entries, however max-len
// changes, against a plain list.
func TestSlowlogKeepsTheNewest(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	s := NewServer(Config{}, newFakeBackend())
	s.slowlog.threshold.Store(0)
	c := &client{s: s}
	var model []string // oldest first
	maxLen := 128
	for i := range 5000 {
		switch r.IntN(50) {
		case 0:
			maxLen = r.IntN(20)
			s.slowlog.maxLen.Store(int64(maxLen))
			s.slowlog.mu.Lock()
			s.slowlog.trim()
			s.slowlog.mu.Unlock()
		case 1:
			s.slowlog.mu.Lock()
			s.slowlog.entries.Reset()
			s.slowlog.mu.Unlock()
			model = nil
			continue
		}
		arg := "k" + strconv.Itoa(i)
		s.commandDone(c, [][]byte{[]byte("ZCARD"), []byte(arg)}, time.Millisecond)
		model = append(model, arg)
		if len(model) > maxLen {
			model = model[len(model)-maxLen:]
		}
		s.slowlog.mu.Lock()
		live := s.slowlog.live()
		if len(live) != len(model) {
			t.Fatalf("step %d: %d entries, want %d", i, len(live), len(model))
		}
		for j, e := range live {
			if string(e.argv[1]) != model[j] {
				t.Fatalf("step %d: entry %d is %q, want %q", i, j, e.argv[1], model[j])
			}
		}
		s.slowlog.mu.Unlock()
	}
}

// BenchmarkSlowlogFlood: every command is slow (a cluster under load
// whose writes wait past slowlog-log-slower-than), the log full, at the
// default slowlog-max-len and at a large one.
func BenchmarkSlowlogFlood(b *testing.B) {
	for _, maxLen := range []int64{128, 10000} {
		b.Run("max-len="+strconv.FormatInt(maxLen, 10), func(b *testing.B) {
			s := NewServer(Config{}, newFakeBackend())
			s.slowlog.threshold.Store(0)
			s.slowlog.maxLen.Store(maxLen)
			c := &client{s: s, addr: "127.0.0.1:40000"}
			argv := [][]byte{[]byte("ZADD"), []byte("bench:k"), []byte("12345"), []byte("m000000012345")}
			for range 2 * maxLen {
				s.commandDone(c, argv, 20*time.Millisecond)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.commandDone(c, argv, 20*time.Millisecond)
			}
		})
	}
}
