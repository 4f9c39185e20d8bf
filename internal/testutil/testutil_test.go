package testutil

import (
	"io"
	"net"
	"reflect"
	"testing"
	"time"
)

func TestSeedReplaysGOBLIN_SEED(t *testing.T) {
	t.Setenv("GOBLIN_SEED", "42")
	if got := Seed(t); got != 42 {
		t.Fatalf("Seed with GOBLIN_SEED=42: %d", got)
	}
	a, b := Rand(t, 1).Uint64(), Rand(t, 1).Uint64()
	if a != b {
		t.Fatalf("two generators of one seed and stream differ: %d %d", a, b)
	}
	if c := Rand(t, 2).Uint64(); c == a {
		t.Fatalf("streams 1 and 2 gave the same first number %d", a)
	}
}

func TestPollWaitsForTheCondition(t *testing.T) {
	start := time.Now()
	Poll(t, time.Second, "50 ms", func() bool { return time.Since(start) >= 50*time.Millisecond })
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("Poll returned before its condition held")
	}
}

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			b.Write([]byte("x"))
		}
	}()
	for range 100 {
		_ = b.String()
	}
	<-done
	if got := len(b.String()); got != 100 {
		t.Fatalf("%d bytes written, want 100", got)
	}
}

func TestScaleMembers(t *testing.T) {
	t.Setenv("GOBLIN_SCALE_MEMBERS", "")
	if n, set := ScaleMembers(t, 7); n != 7 || set {
		t.Fatalf("unset: %d %v", n, set)
	}
	t.Setenv("GOBLIN_SCALE_MEMBERS", "5000")
	if n, set := ScaleMembers(t, 7); n != 5000 || !set {
		t.Fatalf("5000: %d %v", n, set)
	}
}

func TestStartRedisAnswersPing(t *testing.T) {
	r := StartRedis(t)
	if r.Version == "" {
		t.Fatal("no version")
	}
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "+PONG\r\n" {
		t.Fatalf("PING: %q %v", buf, err)
	}
}

func TestGroupBy(t *testing.T) {
	got := GroupBy([]string{"b1", "a1", "b2", "c1", "a2"}, func(s string) byte { return s[0] })
	want := [][]string{{"b1", "b2"}, {"a1", "a2"}, {"c1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GroupBy: %v, want %v", got, want)
	}
}
