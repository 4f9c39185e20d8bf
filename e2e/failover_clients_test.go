package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// failoverProbe writes in a loop through one client and records the first
// success after a moment (the kill).
type failoverProbe struct {
	name string
	mu   sync.Mutex
	// after is when the fault struck (zero before); recovered the first
	// success that started after it; errors counts the failures since.
	after     time.Time
	recovered time.Time
	errors    int
	lastErr   string
	// okBefore counts the successes before the fault.
	okBefore int
}

func (p *failoverProbe) result(ok bool, started time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.after.IsZero():
		if ok {
			p.okBefore++
		}
	case !p.recovered.IsZero():
	case !ok:
		p.errors++
		if err != nil {
			p.lastErr = err.Error()
		}
	case started.After(p.after):
		p.recovered = time.Now()
	}
}

func (p *failoverProbe) strike(at time.Time) {
	p.mu.Lock()
	p.after = at
	p.mu.Unlock()
}

// gap returns the time from the fault to the first success, or false.
func (p *failoverProbe) gap() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.recovered.IsZero() {
		return 0, false
	}
	return p.recovered.Sub(p.after), true
}

// runGo writes with a go-redis client until stop, as an application that
// retries a failed write at once would.
func (p *failoverProbe) runGo(c redis.Cmdable, key string, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			start := time.Now()
			err := c.ZIncrBy(ctx, key, 1, "m").Err()
			cancel()
			p.result(err == nil, start, err)
			if err != nil {
				time.Sleep(10 * time.Millisecond) // an application's retry pause
			} else {
				time.Sleep(5 * time.Millisecond) // the write rate
			}
		}
	}()
}

// pyFailoverScript writes through redis-py's RedisCluster, made with the
// options of its third argument (JSON), in a loop and prints, per attempt,
// "ok|err <start unix ns> [error]". With the option "rebuild" it makes a
// new RedisCluster after a RedisClusterException: redis-py 4.3.4 (Debian
// 12's python3-redis) cannot rebuild its topology itself once a node it
// knew is gone (its NodesManager.initialize deep-copies a bound method
// and fails with "cannot pickle '_thread.lock' object").
const pyFailoverScript = `
import json, sys, time
from redis.cluster import RedisCluster, ClusterNode
from redis.exceptions import RedisClusterException
opts = json.loads(sys.argv[3])
rebuild = opts.pop("rebuild", False)
def connect():
    nodes = [ClusterNode(h, int(p)) for h, p in (a.rsplit(":", 1) for a in sys.argv[2].split(","))]
    return RedisCluster(startup_nodes=nodes, **opts)
rc = connect()
key = sys.argv[1]
while True:
    start = time.time_ns()
    try:
        rc.zincrby(key, 1, "m")
        print("ok", start, flush=True)
        time.sleep(0.005)
    except Exception as e:
        print("err", start, type(e).__name__, str(e).replace("\n", " "), flush=True)
        time.sleep(0.01)
        if rebuild and isinstance(e, RedisClusterException):
            try:
                rc = connect()
            except Exception:
                pass
`

// python returns /usr/bin/python3 if it has redis-py, else "".
func pythonWithRedis(t *testing.T) string {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import redis.cluster").Run(); err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-py is missing (apt-get install -y python3-redis): %v", err)
		}
		return ""
	}
	return py
}

// runPy runs pyFailoverScript until the test ends.
func (p *failoverProbe) runPy(t *testing.T, py, key string, addrs []string, options string) {
	cmd := exec.Command(py, "-c", pyFailoverScript, key, strings.Join(addrs, ","), options)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("redis-py stderr:\n%s", stderr.String())
		}
	})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.SplitN(sc.Text(), " ", 3)
			if len(f) < 2 {
				continue
			}
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			var err error
			if f[0] != "ok" && len(f) == 3 {
				err = fmt.Errorf("%s", f[2])
			}
			p.result(f[0] == "ok", time.Unix(0, ns), err)
		}
		cmd.Wait()
	}()
}

// When the leader is killed, how long each kind of client takes to write
// again: go-redis's ClusterClient (with ClusterStateReloadInterval set, as
// docs/cluster.md advises, and with its defaults when
// GOBLIN_FAILOVER_DEFAULTS=1: those take about a minute), redis-py's
// RedisCluster made anew after a RedisClusterException, and a plain
// client pointed at a node that survives. Each must write again; the figures go to the log and to
// docs/cluster.md.
func TestFailoverClients(t *testing.T) {
	rng := testutil.Rand(t, 3)
	nodes := StartCluster(t, rng, ClusterOptions{Size: 3})
	leader := WaitLeader(t, nodes, 30*time.Second)
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.Addr)
	}
	survivor := Followers(nodes, leader)[0]
	var probes []*failoverProbe
	probe := func(name string) *failoverProbe {
		p := &failoverProbe{name: name}
		probes = append(probes, p)
		return p
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()

	tuned := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClusterStateReloadInterval: time.Second,
		ReadTimeout: 15 * time.Second, WriteTimeout: 15 * time.Second})
	defer tuned.Close()
	probe("go-redis ClusterClient, ClusterStateReloadInterval 1s").runGo(tuned, "gr-tuned", stop, &wg)
	defaults := os.Getenv("GOBLIN_FAILOVER_DEFAULTS") == "1"
	if defaults {
		def := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		defer def.Close()
		probe("go-redis ClusterClient, defaults").runGo(def, "gr-default", stop, &wg)
	}
	plain := survivor.Client(patient)
	probe("go-redis Client on a surviving node ("+survivor.ID+")").runGo(plain, "plain", stop, &wg)
	if py := pythonWithRedis(t); py != "" {
		probe("redis-py RedisCluster, rebuilt on RedisClusterException").runPy(t, py, "py", addrs, `{"rebuild": true}`)
	} else {
		t.Log("redis-py is not installed: its measurement is skipped")
	}

	// Every client writes before the kill.
	for _, p := range probes {
		testutil.Eventually(t, 30*time.Second, func() error {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.okBefore == 0 {
				return fmt.Errorf("%s has not written yet", p.name)
			}
			return nil
		})
	}
	time.Sleep(time.Second) // every client in its stride: the schedule, not a wait
	at := time.Now()
	leader.Kill()
	for _, p := range probes {
		p.strike(at)
	}
	t.Logf("killed the leader %s", leader.ID)
	limit := 30 * time.Second
	if defaults {
		limit = 120 * time.Second
	}
	for _, p := range probes {
		testutil.Eventually(t, limit, func() error {
			if _, ok := p.gap(); !ok {
				p.mu.Lock()
				defer p.mu.Unlock()
				return fmt.Errorf("%s has not written since the kill (%d errors, last: %s)", p.name, p.errors, p.lastErr)
			}
			return nil
		})
	}
	for _, p := range probes {
		gap, _ := p.gap()
		t.Logf("%-55s writes again %6.2f s after the kill (%d failed attempts, last error: %s)", p.name, gap.Seconds(), p.errors, p.lastErr)
	}
}
