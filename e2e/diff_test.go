package e2e

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/resp/wire"
)

// TestDifferential sends redis-server and goblind the same deterministic
// random sequence of commands over raw RESP2 and RESP3 connections and
// compares every reply byte for byte (after normalizing only what Redis
// leaves undecided: see diff_norm_test.go). On the first difference it
// prints the command, both replies, and the shortest command history it
// finds that reproduces the difference from an empty keyspace.
//
//	go test ./e2e -run TestDifferential -args -diff.seed=7 -diff.count=100000
//
// goblind runs with --double-format 7.0, as the reference is Debian's
// Redis 7.0; what Redis 7.2 changed is covered by table tests against 7.2's
// documented bytes.
var (
	diffSeed     = flag.Uint64("diff.seed", 1, "seed of the differential test's command sequence")
	diffCount    = flag.Int("diff.count", 20000, "number of commands the differential test sends")
	diffProto    = flag.Int("diff.proto", 0, "2 or 3: use only that protocol; 0: both")
	diffMinimize = flag.Duration("diff.minimize", 3*time.Minute, "time spent minimizing a difference's history (0: none)")
)

func TestDifferential(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{Args: []string{"--double-format", "7.0", "--fsync", "everysec"}})
	differential(t, rs.Addr, g.Addr, *diffCount)
}

// TestDifferentialThroughFollower runs the differential test's command
// sequence through a follower of a 3-node cluster: its writes are
// forwarded to the leader and answered from the leader's apply, its
// transactions go as one entry, its blocking pops wait for writes made
// through the leader, and its reads wait for its own writes; every reply
// must still be the one redis-server gives.
func TestDifferentialThroughFollower(t *testing.T) {
	rs := testutil.StartRedis(t)
	nodes := StartCluster(t, rand.New(rand.NewPCG(testutil.Seed(t), 0)), ClusterOptions{Size: 3,
		Args: []string{"--double-format", "7.0", "--fsync", "everysec"}})
	leader := WaitLeader(t, nodes, 30*time.Second)
	follower := Followers(nodes, leader)[0]
	differential(t, rs.Addr, follower.Addr, min(*diffCount, 5000))
}

// differential sends redis-server at redisAddr and goblind at goblinAddr
// count commands of the seeded sequence and compares the replies.
func differential(t *testing.T, redisAddr, goblinAddr string, count int) {
	t.Logf("seed %d, %d commands (-args -diff.seed=%d -diff.count=%d)", *diffSeed, count, *diffSeed, count)
	d := &differ{t: t, addrs: [2]string{redisAddr, goblinAddr}}
	if err := d.reset(); err != nil {
		t.Fatal(err)
	}
	defer d.close()
	gen := newGen(*diffSeed, *diffProto, time.Now().Unix())
	counts := map[string]int{}
	kinds := map[string]int{}
	for i := 0; i < count; i++ {
		s := gen.next()
		d.history = append(d.history, s)
		counts[strings.ToUpper(s.argv[0])]++
		same, want, got, err := d.run(s, true)
		if err != nil {
			t.Fatalf("command %d %v: %v", i, s, err)
		}
		gen.inMult = d.inMulti
		kinds[replyKind(want)]++
		if !same {
			d.report(i, s, want, got)
			return
		}
	}
	var names []string
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, " %s:%d", n, counts[n])
	}
	t.Logf("0 differences in %d commands; mix:%s", count, b.String())
	t.Logf("replies: %d errors, %d nulls, %d empty arrays, %d non-empty arrays, %d integers, %d strings, %d queued",
		kinds["error"], kinds["null"], kinds["empty"], kinds["array"], kinds["int"], kinds["string"], kinds["queued"])
}

// replyKind classifies a reply for the run's summary.
func replyKind(b []byte) string {
	switch {
	case bytes.Equal(b, []byte("+QUEUED\r\n")):
		return "queued"
	case b[0] == '-':
		return "error"
	case b[0] == '_' || bytes.Equal(b, []byte("$-1\r\n")) || bytes.Equal(b, []byte("*-1\r\n")):
		return "null"
	case bytes.HasPrefix(b, []byte("*0\r\n")) || bytes.HasPrefix(b, []byte("~0\r\n")):
		return "empty"
	case b[0] == '*' || b[0] == '%' || b[0] == '~':
		return "array"
	case b[0] == ':':
		return "int"
	}
	return "string"
}

// differ drives the two servers: side 0 is redis-server, side 1 goblind.
type differ struct {
	t       *testing.T
	addrs   [2]string
	conns   [2][2]*dconn // [side][conn]
	history []step
	inMulti [2]bool
	queued  [2][][]string // commands queued in each connection's MULTI
	// lastExec is what the last EXEC ran, to compare its replies.
	lastExec [][]string
}

// dconn is a raw RESP connection that reports errors instead of failing.
type dconn struct {
	c  net.Conn
	rd *bufio.Reader
}

func dialD(addr string) (*dconn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &dconn{c: c, rd: bufio.NewReaderSize(c, 1<<16)}, nil
}

func (d *dconn) send(argv []string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(argv))
	for _, a := range argv {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	d.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := d.c.Write(b.Bytes())
	return err
}

func (d *dconn) read() ([]byte, error) {
	d.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var out bytes.Buffer
	err := wire.CopyReply(d.rd, &out)
	return out.Bytes(), err
}

func (d *dconn) do(argv ...string) ([]byte, error) {
	if err := d.send(argv); err != nil {
		return nil, err
	}
	return d.read()
}

func (d *differ) close() {
	for _, side := range d.conns {
		for _, c := range side {
			if c != nil {
				c.c.Close()
			}
		}
	}
}

// reset empties both servers and opens fresh connections: connection 0
// in RESP2, connection 1 in RESP3.
func (d *differ) reset() error {
	d.close()
	d.inMulti = [2]bool{}
	d.queued = [2][][]string{}
	for side, addr := range d.addrs {
		for conn := range 2 {
			c, err := dialD(addr)
			if err != nil {
				return err
			}
			d.conns[side][conn] = c
			if conn == 1 {
				if _, err := c.do("HELLO", "3"); err != nil {
					return err
				}
			}
		}
		if r, err := d.conns[side][0].do("FLUSHALL"); err != nil || string(r) != "+OK\r\n" {
			return fmt.Errorf("FLUSHALL on %s: %q %v", addr, r, err)
		}
	}
	return nil
}

// run sends s to both servers and compares the replies; compare false
// only executes it (while replaying a history).
func (d *differ) run(s step, compare bool) (same bool, want, got []byte, err error) {
	a, b := d.conns[0][s.conn], d.conns[1][s.conn]
	if err := a.send(s.argv); err != nil {
		return false, nil, nil, fmt.Errorf("redis: %w", err)
	}
	if err := b.send(s.argv); err != nil {
		return false, nil, nil, fmt.Errorf("goblin: %w", err)
	}
	if want, err = a.read(); err != nil {
		return false, nil, nil, fmt.Errorf("redis: %w", err)
	}
	if got, err = b.read(); err != nil {
		return false, want, nil, fmt.Errorf("goblin: %w", err)
	}
	d.track(s, want)
	if !compare || bytes.Equal(want, got) {
		return true, want, got, nil
	}
	same, err = d.equivalent(s, want, got)
	return same, want, got, err
}

// track follows each connection's MULTI state from Redis's replies.
func (d *differ) track(s step, reply []byte) {
	name := strings.ToUpper(s.argv[0])
	c := s.conn
	switch {
	case d.inMulti[c] && (name == "EXEC" || name == "DISCARD") && (len(s.argv) == 1 || bytes.HasPrefix(reply, []byte("-EXECABORT"))):
		d.inMulti[c] = false
		d.lastExec = d.queued[c]
	case d.inMulti[c] && string(reply) == "+QUEUED\r\n":
		d.queued[c] = append(d.queued[c], s.argv)
	case !d.inMulti[c] && name == "MULTI" && string(reply) == "+OK\r\n":
		d.inMulti[c] = true
		d.queued[c] = nil
	}
}

// equivalent decides replies that differ in bytes.
func (d *differ) equivalent(s step, want, got []byte) (bool, error) {
	name := strings.ToUpper(s.argv[0])
	w, g := mustParse(want), mustParse(got)
	switch {
	case w.typ == '-' || g.typ == '-':
		return false, nil
	case name == "SCAN" || name == "ZSCAN":
		return d.sameScan(s, w, g)
	case name == "ZRANDMEMBER":
		return d.sameRandom(s, w, g)
	case name == "RANDOMKEY":
		return w.isNull() == g.isNull() && w.typ == g.typ, nil
	case name == "EXEC":
		return d.sameExec(s, w, g), nil
	}
	return sameNormalized(s.argv, w, g), nil
}

func sameNormalized(argv []string, w, g *value) bool {
	if isTTLCommand(argv[0]) {
		return ttlClose(argv[0], w, g)
	}
	normalize(argv, w)
	normalize(argv, g)
	return bytes.Equal(w.bytes(), g.bytes())
}

// sameExec compares EXEC's replies element by element, each normalized as
// the command it answers.
func (d *differ) sameExec(s step, w, g *value) bool {
	q := d.lastExec
	if !w.isArray() || !g.isArray() || len(w.elems) != len(g.elems) || len(w.elems) != len(q) {
		return false
	}
	for i := range w.elems {
		if !bytes.Equal(w.elems[i].bytes(), g.elems[i].bytes()) && !sameNormalized(q[i], w.elems[i], g.elems[i]) {
			return false
		}
	}
	return true
}

// sameScan completes a SCAN or ZSCAN started with cursor 0 on each server
// and compares what the whole scans returned, as sets.
func (d *differ) sameScan(s step, w, g *value) (bool, error) {
	if !w.isArray() || !g.isArray() || len(w.elems) != 2 || len(g.elems) != 2 {
		return false, nil
	}
	at := 1
	if strings.ToUpper(s.argv[0]) == "ZSCAN" {
		at = 2
	}
	var sets [2][]string
	for side, first := range []*value{w, g} {
		v := first
		seen := map[string]bool{}
		for range 100000 {
			unsignZero(v)
			elems := v.elems[1].elems
			if at == 2 {
				for i := 0; i+1 < len(elems); i += 2 {
					seen[elems[i].str+"\x00"+elems[i+1].str] = true
				}
			} else {
				for _, e := range elems {
					seen[e.str] = true
				}
			}
			cursor := v.elems[0].str
			if cursor == "0" {
				break
			}
			argv := append([]string(nil), s.argv...)
			argv[at] = cursor
			r, err := d.conns[side][s.conn].do(argv...)
			if err != nil {
				return false, err
			}
			if v = mustParse(r); !v.isArray() || len(v.elems) != 2 {
				return false, nil
			}
		}
		for k := range seen {
			sets[side] = append(sets[side], k)
		}
		sort.Strings(sets[side])
	}
	return strings.Join(sets[0], "\n") == strings.Join(sets[1], "\n"), nil
}

// sameRandom checks that each server's ZRANDMEMBER reply is a valid draw
// from its own set, and that the two agree in shape and in the set drawn
// from.
func (d *differ) sameRandom(s step, w, g *value) (bool, error) {
	if w.typ != g.typ || w.isNull() != g.isNull() || len(w.elems) != len(g.elems) {
		return false, nil
	}
	if w.isNull() {
		return true, nil
	}
	var contents [2]map[string]string
	for side := range 2 {
		r, err := d.conns[side][s.conn].do("ZRANGE", s.argv[1], "0", "-1", "WITHSCORES")
		if err != nil {
			return false, err
		}
		v := mustParse(r)
		unsignZero(v)
		contents[side] = map[string]string{}
		for i := 0; i < len(v.elems); i++ {
			e := v.elems[i]
			if e.typ == '*' { // RESP3 pairs
				contents[side][e.elems[0].str] = string(e.elems[1].bytes())
				continue
			}
			contents[side][e.str] = string(v.elems[i+1].bytes())
			i++
		}
	}
	if fmt.Sprint(contents[0]) != fmt.Sprint(contents[1]) {
		return false, nil
	}
	set := contents[1]
	unsignZero(w)
	unsignZero(g)
	if len(s.argv) >= 3 {
		// A positive count covering the whole set is decided: the set
		// from the highest rank down.
		if n, err := strconv.Atoi(s.argv[2]); err == nil && n >= len(set) {
			return bytes.Equal(w.bytes(), g.bytes()), nil
		}
	}
	withscores := len(s.argv) == 4
	unique := len(s.argv) >= 3 && !strings.HasPrefix(s.argv[2], "-")
	for _, v := range []*value{w, g} {
		if v.typ == '$' {
			if _, ok := set[v.str]; !ok {
				return false, nil
			}
			continue
		}
		seen := map[string]bool{}
		for i := 0; i < len(v.elems); i++ {
			m, score := v.elems[i], ""
			switch {
			case withscores && m.typ == '*':
				m, score = m.elems[0], string(m.elems[1].bytes())
			case withscores:
				i++
				score = string(v.elems[i].bytes())
			}
			want, ok := set[m.str]
			if !ok || (withscores && want != score) || (unique && seen[m.str]) {
				return false, nil
			}
			seen[m.str] = true
		}
	}
	return true, nil
}

// report prints the first difference and a minimized history.
func (d *differ) report(i int, s step, want, got []byte) {
	t := d.t
	t.Errorf("difference at command %d (seed %d): %v\nredis:  %q\ngoblin: %q", i, *diffSeed, s, want, got)
	if *diffMinimize <= 0 {
		return
	}
	hist := d.minimize(d.history[:len(d.history)-1], s, want, got, time.Now().Add(*diffMinimize))
	var b strings.Builder
	for _, h := range hist {
		fmt.Fprintf(&b, "  %v\n", h)
	}
	fmt.Fprintf(&b, "  %v   <- differs", s)
	t.Errorf("minimized history (%d of %d commands) reproducing it from an empty server:\n%s", len(hist), len(d.history)-1, b.String())
}
