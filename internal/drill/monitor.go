package drill

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// monitorEvery is how often the monitor asks each node for its role.
const monitorEvery = 250 * time.Millisecond

// sample is one answer (or silence) of a node to the monitor.
type sample struct {
	at     int64 // nanoseconds since the start
	node   string
	up     bool
	leader bool // the node says it leads
	term   uint64
}

// monitor records, four times a second, which node says it leads and in
// which term, for the picture and the count of elections.
type monitor struct {
	mu      sync.Mutex
	samples []sample
}

func (m *monitor) run(ctx context.Context, d *Drill) {
	var wg sync.WaitGroup
	for _, n := range d.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *conn
			defer func() {
				if c != nil {
					c.close()
				}
			}()
			t := time.NewTicker(monitorEvery)
			defer t.Stop()
			for {
				s := sample{at: d.since(), node: n.ID}
				if c == nil {
					c, _ = dial(n.Addr, dialOptions{user: d.dialOpts.user, password: d.dialOpts.password, tls: d.dialOpts.tls, timeout: 200 * time.Millisecond})
				}
				if c != nil {
					r, err := c.do(monitorEvery, "INFO", "replication")
					if err != nil {
						c.close()
						c = nil
					} else {
						s.up = true
						sc := bufio.NewScanner(strings.NewReader(string(r.Str)))
						for sc.Scan() {
							k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), ":")
							switch k {
							case "role":
								s.leader = v == "master"
							case "goblin_term":
								s.term, _ = strconv.ParseUint(v, 10, 64)
							}
						}
					}
				}
				m.mu.Lock()
				m.samples = append(m.samples, s)
				m.mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
}

func (m *monitor) all() []sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sample(nil), m.samples...)
}

// terms returns the lowest and highest term any node reported.
func (m *monitor) terms() (lo, hi uint64) {
	for _, s := range m.all() {
		if s.term == 0 {
			continue
		}
		if lo == 0 || s.term < lo {
			lo = s.term
		}
		hi = max(hi, s.term)
	}
	return lo, hi
}
