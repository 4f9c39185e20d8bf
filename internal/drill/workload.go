package drill

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The mix of operations, in percent.
var mix = []struct {
	kind Kind
	pct  int
}{
	{KindZAdd, 25}, {KindZIncrBy, 20}, {KindZScore, 25}, {KindZRange, 15}, {KindWitness, 15},
}

func pickKind(rng *rand.Rand) Kind {
	x := rng.IntN(100)
	for _, m := range mix {
		if x < m.pct {
			return m.kind
		}
		x -= m.pct
	}
	return KindZScore
}

// keyName returns the name of workload key i (-1: the witness set).
func (d *Drill) keyName(i int) string {
	if i < 0 {
		return d.prefix + "witness"
	}
	return d.prefix + "k" + strconv.Itoa(i)
}

func memberName(i int) string { return "m" + strconv.Itoa(i) }

// padName is the pad member of a large witness write.
func padName(witness string, size int) string {
	return witness + ":" + strings.Repeat("p", max(size-len(witness)-1, 0))
}

// memberIndex parses a member name back ("m3" → 3), -1 if it is not one.
func memberIndex(s string) int {
	t, ok := strings.CutPrefix(s, "m")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(t)
	if err != nil || i < 0 {
		return -1
	}
	return i
}

// since returns nanoseconds since the run started.
func (d *Drill) since() int64 { return time.Since(d.start).Nanoseconds() }

// runClients runs the workload until ctx ends, client i drawing its
// choices from seeds[i].
func (d *Drill) runClients(ctx context.Context, seeds []uint64) {
	var tokens chan struct{}
	if d.cfg.Rate > 0 {
		tokens = make(chan struct{}, d.cfg.Clients)
		go func() {
			t := time.NewTicker(time.Duration(float64(time.Second) / d.cfg.Rate))
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					select {
					case tokens <- struct{}{}:
					default: // every client is busy: the rate is not reached
					}
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for c := 0; c < d.cfg.Clients; c++ {
		seed := seeds[c]
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.client(ctx, c, rand.New(rand.NewPCG(seed, uint64(c))), tokens)
		}()
	}
	wg.Wait()
}

// client is one sequential client: it sends one operation at a time to
// its node (client i uses node i mod the number of nodes, so every node
// has clients and a node that hangs holds only its own), and records it.
func (d *Drill) client(ctx context.Context, id int, rng *rand.Rand, tokens chan struct{}) {
	conns := map[string]*conn{}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for seq := 0; ; seq++ {
		if tokens != nil {
			select {
			case <-ctx.Done():
				return
			case <-tokens:
			}
		} else if ctx.Err() != nil {
			return
		}
		n := d.nodes[id%len(d.nodes)]
		op := Op{Client: id, Node: n.ID, Kind: pickKind(rng), Key: rng.IntN(d.cfg.Keys), Member: rng.IntN(d.cfg.Members)}
		var args []string
		switch op.Kind {
		case KindZAdd:
			op.Arg = float64(rng.IntN(100))
			args = []string{"ZADD", d.keyName(op.Key), fmtScore(op.Arg), memberName(op.Member)}
		case KindZIncrBy:
			op.Arg = float64(rng.IntN(9) - 4)
			if op.Arg == 0 {
				op.Arg = 5
			}
			args = []string{"ZINCRBY", d.keyName(op.Key), fmtScore(op.Arg), memberName(op.Member)}
		case KindZScore:
			args = []string{"ZSCORE", d.keyName(op.Key), memberName(op.Member)}
		case KindZRange:
			op.Member = 0
			args = []string{"ZRANGE", d.keyName(op.Key), "0", "-1", "WITHSCORES"}
		case KindWitness:
			op.Key, op.Member = -1, 0
			op.Witness = fmt.Sprintf("c%d-%d", id, seq)
			args = []string{"ZADD", d.keyName(-1), strconv.Itoa(seq), op.Witness}
			if d.cfg.LargeBytes > 0 && rng.IntN(d.cfg.LargeEvery) == 0 {
				// Its pad, scored -1, makes the write one a cluster
				// writes in pieces: witness and pad arrive together or
				// not at all (checkWitness counts them).
				op.Large = true
				args = append(args, "-1", padName(op.Witness, d.cfg.LargeBytes))
			}
		}
		op.Invoke = d.since()
		r, err := d.send(conns, n, args)
		op.Return = d.since()
		op.Outcome = classify(err)
		if err != nil {
			op.Error = err.Error()
		} else if err := op.parse(r); err != nil {
			// A reply of the wrong shape: recorded as an error the
			// checker cannot explain.
			op.Outcome, op.Error = Unknown, err.Error()
		}
		d.hist.add(op)
	}
}

// send runs one command on n through the client's connection to it,
// connecting first if needed; a connection that failed is dropped.
func (d *Drill) send(conns map[string]*conn, n *node, args []string) (reply, error) {
	c := conns[n.ID]
	if c == nil {
		var err error
		if c, err = dial(n.Addr, d.dialOpts); err != nil {
			return reply{}, err
		}
		conns[n.ID] = c
	}
	r, err := c.do(d.cfg.OpTimeout, args...)
	var er errorReply
	if err != nil && !errors.As(err, &er) {
		c.close()
		delete(conns, n.ID)
	}
	return r, err
}

// parse fills the operation's result from its reply.
func (op *Op) parse(r reply) error {
	switch op.Kind {
	case KindZAdd, KindWitness:
		if r.Kind != ':' {
			return fmt.Errorf("ZADD answered %q", r.Kind)
		}
		op.Added = r.Num
	case KindZIncrBy:
		s, err := strconv.ParseFloat(string(r.Str), 64)
		if r.Kind != '$' || r.Null || err != nil {
			return fmt.Errorf("ZINCRBY answered %q %q", r.Kind, string(r.Str))
		}
		op.Score = s
	case KindZScore:
		if r.Kind != '$' {
			return fmt.Errorf("ZSCORE answered %q", r.Kind)
		}
		if r.Null {
			op.Absent = true
			return nil
		}
		s, err := strconv.ParseFloat(string(r.Str), 64)
		if err != nil {
			return fmt.Errorf("ZSCORE answered %q", string(r.Str))
		}
		op.Score = s
	case KindZRange:
		if r.Kind != '*' || len(r.Array)%2 != 0 {
			return fmt.Errorf("ZRANGE answered %q with %d elements", r.Kind, len(r.Array))
		}
		op.Range = []Scored{}
		for i := 0; i < len(r.Array); i += 2 {
			s, err := strconv.ParseFloat(string(r.Array[i+1].Str), 64)
			if err != nil {
				return fmt.Errorf("ZRANGE score %q", string(r.Array[i+1].Str))
			}
			op.Range = append(op.Range, Scored{Member: memberIndex(string(r.Array[i].Str)), Score: s})
		}
	}
	return nil
}

func fmtScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
