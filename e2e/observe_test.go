package e2e

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// Differential test of SLOWLOG, LATENCY, MONITOR, TIME, CLIENT KILL and
// CLIENT PAUSE against Redis 7.2, in RESP2 and RESP3: replies compared
// byte for byte, after replacing what neither server decides alike
// (clocks, durations, entry IDs, client ports) with placeholders.
//
//	REDIS_SERVER=/path/to/redis-7.2/src/redis-server go test ./e2e -run Observability
func TestObservabilityMatchesRedis72(t *testing.T) {
	r := startRedis72(t)
	g := StartGoblind(t, NodeOptions{})
	long := strings.Repeat("m", 130)
	for _, proto := range []string{"2", "3"} {
		rc, gc := dialPair(t, r.Addr, g.Addr, proto)
		steps := [][]string{
			{"CONFIG", "GET", "slowlog-log-slower-than"}, {"CONFIG", "GET", "slowlog-max-len"},
			{"CONFIG", "GET", "latency-monitor-threshold"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "-2"}, {"CONFIG", "SET", "slowlog-max-len", "-1"},
			{"CONFIG", "SET", "latency-monitor-threshold", "x"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "-1"},
			{"SLOWLOG", "RESET"}, {"SLOWLOG", "LEN"}, {"SLOWLOG", "GET"}, {"SLOWLOG", "GET", "-1"},
			{"SLOWLOG", "GET", "x"}, {"SLOWLOG", "GET", "-2"}, {"SLOWLOG", "FOO"}, {"SLOWLOG", "LEN", "x"},
			{"SLOWLOG", "GET", "1", "2"}, {"SLOWLOG"},
			{"LATENCY", "LATEST"}, {"LATENCY", "HISTORY", "command"}, {"LATENCY", "RESET"},
			{"LATENCY", "RESET", "a", "b"}, {"LATENCY", "FOO"}, {"LATENCY", "HISTORY"}, {"LATENCY", "LATEST", "x"},
			{"CLIENT", "KILL", "1.2.3.4:5"}, {"CLIENT", "KILL", "ID", "0"}, {"CLIENT", "KILL", "ID", "x"},
			{"CLIENT", "KILL", "TYPE", "foo"}, {"CLIENT", "KILL", "USER", "nobody"},
			{"CLIENT", "KILL", "SKIPME", "maybe"}, {"CLIENT", "KILL", "ID", "1", "ADDR"},
			{"CLIENT", "KILL", "FOO", "bar"}, {"CLIENT", "KILL", "TYPE", "pubsub"}, {"CLIENT", "KILL", "TYPE", "master"},
			{"CLIENT", "KILL", "ID", "999999"}, {"CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "no"},
			{"CLIENT", "KILL"},
			{"CLIENT", "PAUSE", "x"}, {"CLIENT", "PAUSE", "-1"}, {"CLIENT", "PAUSE", "100", "READS"},
			{"CLIENT", "PAUSE"}, {"CLIENT", "PAUSE", "0", "WRITE"}, {"CLIENT", "UNPAUSE"}, {"CLIENT", "UNPAUSE", "x"},
			{"TIME"}, {"TIME", "x"},
			// A slow log entry: every argument kept, the long one cut.
			{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, {"CLIENT", "SETNAME", "w1"},
			{"ZADD", "k", "1", long}, {"SLOWLOG", "GET", "1"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "10000"},
		}
		for _, argv := range steps {
			want, got := doBoth(t, rc, gc, argv)
			if w, g := normalizeObserved(want), normalizeObserved(got); w != g {
				t.Errorf("RESP%s %s:\nredis:  %q\ngoblin: %q", proto, strings.Join(argv, " "), w, g)
			}
		}
		rc.do("DEL", "k")
		gc.do("DEL", "k")
	}

	// MONITOR lines.
	var lines [2][]string
	for i, addr := range []string{r.Addr, g.Addr} {
		m, err := dialD(addr)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := m.do("MONITOR"); err != nil || string(ok) != "+OK\r\n" {
			t.Fatalf("MONITOR: %q %v", ok, err)
		}
		c, err := dialD(addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, argv := range [][]string{{"SELECT", "3"}, {"ZADD", "k", "1", "a\"b\\\n\r\t\x07\x08\x00\xff é"},
			{"CONFIG", "GET", "port"}, {"MULTI"}, {"ZCARD", "k"}, {"EXEC"}, {"AUTH", "x", "y"},
			{"HELLO", "3", "AUTH", "default", "pw", "SETNAME", "n"}, {"DEL", "k"}} {
			if _, err := c.do(argv...); err != nil {
				t.Fatal(err)
			}
		}
		for range 8 {
			line, err := m.read()
			if err != nil {
				t.Fatal(err)
			}
			lines[i] = append(lines[i], monitorPrefix.ReplaceAllString(string(line), "+<time> [$1 <addr>] "))
		}
		m.c.Close()
		c.c.Close()
	}
	for j := range lines[0] {
		if lines[0][j] != lines[1][j] {
			t.Errorf("MONITOR line %d:\nredis:  %q\ngoblin: %q", j, lines[0][j], lines[1][j])
		}
	}
}

var (
	monitorPrefix = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) [0-9.:]+\] `)
	// A slow log entry's ID, time, duration and client address; TIME's
	// bulk strings.
	slowEntry = regexp.MustCompile(`\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n`)
	clientIP  = regexp.MustCompile(`\$\d+\r\n127\.0\.0\.1:\d+\r\n`)
	timeReply = regexp.MustCompile(`^\*2\r\n\$\d+\r\n\d+\r\n\$\d+\r\n\d+\r\n$`)
)

func normalizeObserved(b []byte) string {
	if timeReply.Match(b) {
		return "<time>"
	}
	b = slowEntry.ReplaceAll(b, []byte("*6\r\n<id time duration>"))
	b = clientIP.ReplaceAll(b, []byte("<addr>"))
	return string(bytes.Clone(b))
}
