package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
	"github.com/goblindb/goblin/resp/wire"
)

func secretOf(b byte) []byte { return bytes.Repeat([]byte{b}, MinSecretLen) }

func mustSecret(t testing.TB, id string, secrets ...[]byte) Credentials {
	t.Helper()
	c, err := NewSecretCredentials(id, secrets)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testPlane listens on loopback with creds and answers every internal
// connection with "+<id>\r\n".
func testPlane(t testing.TB, id string, creds Credentials) *plane {
	t.Helper()
	p, err := listenPlane(id, "127.0.0.1:0", "", creds, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.close() })
	h := func(c net.Conn) {
		c.Write([]byte("+" + id + "\r\n"))
		c.Close()
	}
	p.internal.Store(&h)
	return p
}

// talk dials to's plane from from and returns what to's handler said.
func talk(from, to *plane) (string, error) {
	c, err := from.dial(to.adv.String(), kindInternal, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// Planes with the same secret talk; with another secret, or with none on
// one side, neither side gets through, whichever dials.
func TestPlaneSecretHandshake(t *testing.T) {
	a := testPlane(t, "a", mustSecret(t, "a", secretOf('x')))
	b := testPlane(t, "b", mustSecret(t, "b", secretOf('x')))
	other := testPlane(t, "other", mustSecret(t, "other", secretOf('y')))
	plain := testPlane(t, "plain", nil)
	if got, err := talk(a, b); err != nil || got != "+b" {
		t.Fatalf("same secret: %q %v", got, err)
	}
	if got, err := talk(b, a); err != nil || got != "+a" {
		t.Fatalf("same secret, other way: %q %v", got, err)
	}
	for _, pair := range [][2]*plane{{a, other}, {other, a}, {plain, a}, {a, plain}} {
		if got, err := talk(pair[0], pair[1]); err == nil && got != "" {
			t.Fatalf("%s reached %s's handler: %q", pair[0].adv, pair[1].adv, got)
		}
	}
}

// A Raft connection that names its node reaches it only: at an address
// another node holds it fails, and that node's Raft sees nothing of it.
// One that names no one (an older build's) is taken as before.
func TestPlaneRaftTargets(t *testing.T) {
	for _, secret := range []bool{false, true} {
		t.Run(fmt.Sprintf("secret=%v", secret), func(t *testing.T) {
			var ca, cb Credentials
			if secret {
				ca, cb = mustSecret(t, "a", secretOf('x')), mustSecret(t, "b", secretOf('x'))
			}
			a, b := testPlane(t, "a", ca), testPlane(t, "b", cb)
			stream := raftStream{a}
			received := func() bool {
				select {
				case c := <-b.raftConns:
					c.Close()
					return true
				case <-time.After(200 * time.Millisecond):
					return false
				}
			}
			for _, c := range []struct {
				addr string
				ok   bool
			}{
				{targetAddr(b.adv.String(), "b"), true},
				{targetAddr(b.adv.String(), "c"), false},
				{b.adv.String(), true},
			} {
				conn, err := stream.Dial(raft.ServerAddress(c.addr), 2*time.Second)
				if c.ok != (err == nil) || !c.ok && !errors.Is(err, errNotTarget) {
					t.Fatalf("dialing %s: %v", c.addr, err)
				}
				if conn != nil {
					conn.Close()
				}
				if got := received(); got != c.ok {
					t.Fatalf("dialing %s: b's Raft received a connection: %v", c.addr, got)
				}
			}
		})
	}
}

// During a rotation a node signing with the new secret and one still
// signing with the old talk, as long as each accepts both; a node that
// only knows the old secret refuses the new one.
func TestPlaneSecretRotation(t *testing.T) {
	oldS, newS := secretOf('o'), secretOf('n')
	stillOld := testPlane(t, "a", mustSecret(t, "a", oldS, newS))
	moved := testPlane(t, "b", mustSecret(t, "b", newS, oldS))
	onlyOld := testPlane(t, "c", mustSecret(t, "c", oldS))
	for _, pair := range [][2]*plane{{stillOld, moved}, {moved, stillOld}, {stillOld, onlyOld}, {onlyOld, stillOld}} {
		if _, err := talk(pair[0], pair[1]); err != nil {
			t.Fatalf("%s to %s: %v", pair[0].adv, pair[1].adv, err)
		}
	}
	if got, err := talk(moved, onlyOld); err == nil && got != "" {
		t.Fatalf("a node that knows only the old secret accepted the new one: %q", got)
	}
	// Updating the old-only node to both lets them talk.
	if err := onlyOld.creds.(*SecretCredentials).Update([][]byte{oldS, newS}); err != nil {
		t.Fatal(err)
	}
	if _, err := talk(moved, onlyOld); err != nil {
		t.Fatalf("after the update: %v", err)
	}
}

func TestSecretTooShort(t *testing.T) {
	if _, err := NewSecretCredentials("n", [][]byte{[]byte("hunter2")}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("a 7-byte secret: %v", err)
	}
	k1, _ := GossipKeyFromSecret(secretOf('x'))
	k2, _ := GossipKeyFromSecret(secretOf('x'))
	k3, _ := GossipKeyFromSecret(secretOf('y'))
	if len(k1) != 32 || !bytes.Equal(k1, k2) || bytes.Equal(k1, k3) {
		t.Fatalf("gossip keys: %x %x %x", k1, k2, k3)
	}
}

// A peer that connects and says nothing is dropped after the handshake
// timeout; closing the plane closes connections in every state.
func TestPlaneCloseWithIdlePeers(t *testing.T) {
	p := testPlane(t, "a", mustSecret(t, "a", secretOf('x')))
	var conns []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", p.adv.String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	done := make(chan struct{})
	go func() { p.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the plane hung on idle peers")
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("a peer's connection stayed open")
		}
		c.Close()
	}
}

// fuzzNode answers internal requests as a leader would, validating
// entries by decoding them.
type fuzzNode struct{ Node }

func (fuzzNode) ProposeTogether(fn func()) { fn() }

func (fuzzNode) ApplyForwarded(b []byte) (func() (raftfsm.Result, error), func() bool) {
	answered := func() bool { return true }
	if _, err := raftfsm.Decode(b); err != nil {
		return func() (raftfsm.Result, error) { return raftfsm.Result{}, node.ErrBadEntry }, answered
	}
	return func() (raftfsm.Result, error) { return raftfsm.Result{Index: 1, Reply: []byte("+OK\r\n")}, nil }, answered
}
func (fuzzNode) ReadIndex(context.Context) (uint64, error) { return 7, nil }
func (fuzzNode) ReadIndexNow() (uint64, bool)              { return 7, true }
func (fuzzNode) RemoveServerHere(string) error             { return node.ErrNoSuchNode }
func (fuzzNode) TransferLeadershipHere(string) error       { return node.ErrNotLeader }

// FuzzPlaneConn sends arbitrary bytes to a plane without credentials
// (the preamble, a Raft connection's target, then whatever follows, to
// the internal server): nothing panics, and the connection ends.
func FuzzPlaneConn(f *testing.F) {
	f.Add([]byte("GOB\x01I*1\r\n$9\r\nGOBLIN.ID\r\n"))
	f.Add([]byte("GOB\x01I*2\r\n$12\r\nGOBLIN.APPLY\r\n$3\r\n\x01\x01\x00\r\n*1\r\n$16\r\nGOBLIN.READINDEX\r\n"))
	f.Add([]byte("GOB\x01I*3\r\n$12\r\nGOBLIN.ADMIN\r\n$6\r\nREMOVE\r\n$2\r\nn9\r\n"))
	f.Add([]byte("GOB\x01R\x00\x01\x02"))
	f.Add([]byte("GOB\x01T\x02n1\x00\x01\x02"))
	f.Add([]byte("GOB\x01T\x05other\x00"))
	f.Add([]byte("GOB\x01T\xffn1"))
	f.Add([]byte("\x16\x03\x01\x00\x05hello"))
	f.Add([]byte("PING\r\n"))
	c := &Cluster{cfg: Config{ID: "n1"}, node: fuzzNode{}, log: hclog.NewNullLogger()}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &plane{id: "n1", creds: nil, log: hclog.NewNullLogger(), raftConns: make(chan net.Conn), conns: map[*planeConn]struct{}{}, done: make(chan struct{}),
			pending: newConnBound(maxPending, maxPendingPerHost)}
		serve := c.serveInternal
		p.internal.Store(&serve)
		client, server := net.Pipe()
		pc := p.track(server)
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			p.pending.acquire("pipe")
			p.admit(pc, "pipe")
		}()
		go func() {
			// Write, read what comes back for a moment, then hang up.
			client.SetDeadline(time.Now().Add(100 * time.Millisecond))
			client.Write(data)
			io.Copy(io.Discard, io.LimitReader(client, 1<<20))
			client.Close()
		}()
		// The Raft side is nobody's here: take it so admit returns.
		select {
		case rc := <-p.raftConns:
			rc.Close()
		case <-finished:
		}
		select {
		case <-finished:
		case <-time.After(handshakeTimeout + 2*time.Second):
			t.Fatal("the plane did not let go of the connection")
		}
	})
}

// The internal server's reply to each request is one RESP value, and a
// request it does not know is an error, not a crash.
func TestInternalRequests(t *testing.T) {
	c := &Cluster{cfg: Config{ID: "n1"}, node: fuzzNode{}, log: hclog.NewNullLogger()}
	client, server := net.Pipe()
	go c.serveInternal(server)
	defer client.Close()
	client.SetDeadline(time.Now().Add(5 * time.Second))
	junk := make([]byte, 8)
	rand.Read(junk)
	good := (&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil)
	reqs := [][]string{
		{"GOBLIN.ID"}, {"goblin.readindex"}, {"GOBLIN.APPLY", string(junk[:0])}, {"GOBLIN.APPLY", string(good)},
		{"GOBLIN.ADMIN", "REMOVE", "n9"}, {"GOBLIN.ADMIN", "TRANSFER"}, {"GOBLIN.ADMIN", "BOGUS"}, {"FLUSHALL"},
	}
	want := []string{"$2", ":7", "-BADENTRY", "*2", "-NOSUCHNODE", "-NOTLEADER", "-ERR syntax error", "-ERR unknown internal request 'FLUSHALL'"}
	go func() {
		for _, r := range reqs {
			client.Write(wire.AppendCommandStrings(nil, r...))
		}
	}()
	br := bufio.NewReader(client)
	for i, w := range want {
		v, err := wire.ReadReply(br)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		got := string(v.Kind) + string(v.Str)
		if v.Kind == ':' || v.Kind == '*' || v.Kind == '$' {
			got = string(v.Kind)
			switch v.Kind {
			case ':':
				got += strconv.Itoa(int(v.Num))
			case '*':
				got += strconv.Itoa(len(v.Array))
			case '$':
				got += strconv.Itoa(len(v.Str))
			}
		}
		if !strings.HasPrefix(got, w) {
			t.Fatalf("reply %d to %q: %q, want %q...", i, reqs[i], got, w)
		}
	}
}

// Connections that never finish their handshake are bounded: beyond
// maxPendingPerHost from one host they are closed at once, so a flood
// holds few descriptors, and a peer from another host still gets in.
func TestPlanePendingConnectionsBounded(t *testing.T) {
	p := testPlane(t, "p", mustSecret(t, "p", secretOf('x')))
	peer := testPlane(t, "peer", mustSecret(t, "peer", secretOf('x')))
	idle := floodIdle(t, p.adv.String(), 3*maxPendingPerHost)
	// Well within the handshake timeout: the ones past the bound were
	// closed at once, the others are still waiting.
	time.Sleep(200 * time.Millisecond)
	if pending := p.pending.count(); pending > maxPendingPerHost {
		t.Fatalf("%d connections pending, bound %d", pending, maxPendingPerHost)
	}
	if n := countClosed(idle, time.Second); n != len(idle)-maxPendingPerHost {
		t.Fatalf("%d of %d idle connections closed within a second, want %d", n, len(idle), len(idle)-maxPendingPerHost)
	}
	if got, err := talk(peer, p); err != nil || got != "+p" {
		t.Fatalf("a peer during the flood: %q %v", got, err)
	}
}

// floodIdle opens n connections to addr from 127.0.0.2 that send
// nothing; they are closed at the end of the test.
func floodIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
	var idle []net.Conn
	t.Cleanup(func() {
		for _, c := range idle {
			c.Close()
		}
	})
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	return idle
}

// countClosed counts the connections the other side closes within d.
func countClosed(conns []net.Conn, d time.Duration) int {
	var closed atomic.Int32
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(d))
			if _, err := c.Read(make([]byte, 1)); err == io.EOF || isReset(err) {
				closed.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(closed.Load())
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
