package resp

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// infoLine returns the value of the line of INFO section starting with
// prefix ("" if none).
func infoLine(c *conn, section, prefix string) string {
	for _, line := range strings.Split(c.do("INFO", section), "\r\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	return ""
}

func TestInfoCommandStats(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	c.do("ZADD", "z", "1", "a")
	c.do("ZADD", "z", "2", "b")
	c.do("ZADD", "z", "x", "b") // refused by validation: failed, as in Redis
	c.do("ZADD", "z")           // wrong arity: rejected
	c.do("SET", "s", "v")       // unknown: neither
	c.do("ZSCORE", "z", "a")
	c.do("ZSCORE", "nokey", "a")
	c.do("ZINCRBY", "z", "nan", "a") // an error from the log's apply: failed
	// A pipeline whose middle write fails: the batch's replies are told
	// apart.
	c.send([]byte(string(encode("ZADD", "p", "1", "a")) + string(encode("ZADD", "z", "1", "a", "2")) + string(encode("ZADD", "p", "2", "b"))))
	for range 3 {
		c.read()
	}
	// A batch whose second write fails as it is applied.
	c.send([]byte(string(encode("ZINCRBY", "q", "+inf", "a")) + string(encode("ZINCRBY", "q", "-inf", "a")) + string(encode("ZADD", "q", "1", "b"))))
	for _, want := range []string{"$3\r\ninf\r\n", "-ERR resulting score is not a number (NaN)\r\n", ":1\r\n"} {
		if got := c.read(); got != want {
			t.Fatalf("batch reply %q, want %q", got, want)
		}
	}

	zadd := infoLine(c, "commandstats", "cmdstat_zadd:")
	m := regexp.MustCompile(`^calls=(\d+),usec=(\d+),usec_per_call=(\d+\.\d\d),rejected_calls=(\d+),failed_calls=(\d+)$`).FindStringSubmatch(zadd)
	if m == nil {
		t.Fatalf("cmdstat_zadd:%s", zadd)
	}
	if m[1] != "7" || m[4] != "1" || m[5] != "2" {
		t.Errorf("cmdstat_zadd:%s, want calls=7, rejected_calls=1, failed_calls=2", zadd)
	}
	if usec, _ := strconv.Atoi(m[2]); usec <= 0 {
		t.Errorf("cmdstat_zadd: usec %d", usec)
	}
	if v := infoLine(c, "commandstats", "cmdstat_zscore:"); !strings.HasPrefix(v, "calls=2,") || !strings.HasSuffix(v, ",rejected_calls=0,failed_calls=0") {
		t.Errorf("cmdstat_zscore:%s", v)
	}
	if v := infoLine(c, "commandstats", "cmdstat_zincrby:"); !strings.HasPrefix(v, "calls=3,") || !strings.HasSuffix(v, "failed_calls=2") {
		t.Errorf("cmdstat_zincrby:%s", v)
	}
	if v := infoLine(c, "commandstats", "cmdstat_set:"); v != "" {
		t.Errorf("an unknown command has stats: %s", v)
	}
	// Errors: arity, the unknown command, the score, the NaN increment,
	// the odd member count and the NaN result are ERR.
	if v := infoLine(c, "errorstats", "errorstat_ERR:"); v != "count=6" {
		t.Errorf("errorstat_ERR:%s, want count=6", v)
	}
	if v := infoField(t, c, "stats", "total_error_replies"); v != "6" {
		t.Errorf("total_error_replies:%s", v)
	}
	if v := infoField(t, c, "stats", "keyspace_hits"); v != "1" {
		t.Errorf("keyspace_hits:%s", v)
	}
	if v := infoField(t, c, "stats", "keyspace_misses"); v != "1" {
		t.Errorf("keyspace_misses:%s", v)
	}
	lat := infoLine(c, "latencystats", "latency_percentiles_usec_zadd:")
	if !regexp.MustCompile(`^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`).MatchString(lat) {
		t.Errorf("latency_percentiles_usec_zadd:%s", lat)
	}
	in, _ := strconv.Atoi(infoField(t, c, "stats", "total_net_input_bytes"))
	out, _ := strconv.Atoi(infoField(t, c, "stats", "total_net_output_bytes"))
	if in < 100 || out < 50 {
		t.Errorf("total_net_input_bytes %d, total_net_output_bytes %d", in, out)
	}
	for _, f := range []string{"used_cpu_sys", "used_cpu_user"} {
		if v, err := strconv.ParseFloat(infoField(t, c, "cpu", f), 64); err != nil || v < 0 {
			t.Errorf("%s: %v %v", f, v, err)
		}
	}
	if all := c.do("INFO"); !strings.Contains(all, "# CPU\r\n") || !strings.Contains(all, "# Errorstats\r\n") || strings.Contains(all, "# Commandstats") {
		t.Errorf("INFO's default sections: %q", all)
	}

	c.do("CONFIG", "RESETSTAT")
	if v := infoLine(c, "commandstats", "cmdstat_zadd:"); v != "" {
		t.Errorf("after RESETSTAT: cmdstat_zadd:%s", v)
	}
	if v := c.do("INFO", "errorstats"); strings.Contains(v, "errorstat_") {
		t.Errorf("after RESETSTAT: %q", v)
	}
}

// TestInfoErrorsInTransaction: an error inside EXEC's reply is a failed
// call of its command and an error reply, as in Redis.
func TestInfoErrorsInTransaction(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	c.do("ZINCRBY", "q", "+inf", "a")
	c.do("MULTI")
	c.do("ZADD", "z", "1", "a")
	c.do("ZINCRBY", "q", "-inf", "a")
	c.do("PING")
	if got := c.do("EXEC"); got != "*3\r\n:1\r\n-ERR resulting score is not a number (NaN)\r\n+PONG\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	if v := infoLine(c, "commandstats", "cmdstat_zincrby:"); !strings.HasSuffix(v, "failed_calls=1") {
		t.Errorf("cmdstat_zincrby:%s", v)
	}
	for _, cmd := range []string{"zadd", "exec", "ping"} {
		if v := infoLine(c, "commandstats", "cmdstat_"+cmd+":"); !strings.HasSuffix(v, "failed_calls=0") {
			t.Errorf("cmdstat_%s:%s", cmd, v)
		}
	}
	if v := infoLine(c, "errorstats", "errorstat_ERR:"); v != "count=1" {
		t.Errorf("errorstat_ERR:%s", v)
	}
}

// TestInfoBlockingKeys: INFO clients counts the clients blocked and the
// keys they wait on.
func TestInfoBlockingKeys(t *testing.T) {
	s, _ := startServer(t, Config{})
	blocked := dial(t, s)
	blocked.send(encode("BZPOPMIN", "a", "b", "a", "0"))
	c := dial(t, s)
	deadline := time.Now().Add(5 * time.Second)
	for infoField(t, c, "clients", "blocked_clients") != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the client did not block")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := infoField(t, c, "clients", "total_blocking_keys"); v != "2" {
		t.Errorf("total_blocking_keys:%s, want 2", v)
	}
	c.do("ZADD", "b", "1", "m")
	if got := blocked.read(); got != "*3\r\n$1\r\nb\r\n$1\r\nm\r\n$1\r\n1\r\n" {
		t.Fatalf("BZPOPMIN: %q", got)
	}
	if v := infoField(t, c, "clients", "total_blocking_keys"); v != "0" {
		t.Errorf("after the pop: total_blocking_keys:%s", v)
	}
}

// TestInfoInstantaneousOps: instantaneous_ops_per_sec follows the recent
// rate of commands.
func TestInfoInstantaneousOps(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	if v := infoField(t, c, "stats", "instantaneous_ops_per_sec"); v != "0" {
		t.Errorf("idle: instantaneous_ops_per_sec:%s", v)
	}
	var pipe []byte
	for range 100 {
		pipe = append(pipe, encode("PING")...)
	}
	// 100 commands every 20 ms for 500 ms: about 5000 a second.
	for range 25 {
		c.send(pipe)
		for range 100 {
			c.read()
		}
		time.Sleep(20 * time.Millisecond)
	}
	v, err := strconv.Atoi(infoField(t, c, "stats", "instantaneous_ops_per_sec"))
	if err != nil || v < 200 {
		t.Errorf("instantaneous_ops_per_sec:%d (%v), want a rate near 5000", v, err)
	}
}
