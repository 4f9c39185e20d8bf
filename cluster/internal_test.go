package cluster

import (
	"bufio"
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
	"github.com/goblindb/goblin/resp/wire"
)

// heldNode is a leader whose forwarded entries wait for release, and
// whose read index is known without a round (now) or needs one.
type heldNode struct {
	fuzzNode
	release chan struct{}
	now     bool
	rounds  atomic.Int64
}

func (h *heldNode) ApplyForwarded([]byte) (func() (raftfsm.Result, error), func() bool) {
	return func() (raftfsm.Result, error) {
			<-h.release
			return raftfsm.Result{Index: 5, Reply: []byte("+OK\r\n")}, nil
		}, func() bool {
			select {
			case <-h.release:
				return true
			default:
				return false
			}
		}
}

func (h *heldNode) ReadIndex(context.Context) (uint64, error) {
	h.rounds.Add(1)
	return 9, nil
}

func (h *heldNode) ReadIndexNow() (uint64, bool) { return 8, h.now }

// A read index the lease answers goes back at once when nothing waits,
// and never overtakes the reply of a request sent before it: an entry
// still being applied holds it back.
func TestInternalReadIndexKeepsOrder(t *testing.T) {
	for _, now := range []bool{true, false} {
		h := &heldNode{release: make(chan struct{}), now: now}
		c := &Cluster{cfg: Config{ID: "n1"}, node: h, log: hclog.NewNullLogger()}
		client, server := net.Pipe()
		go c.serveInternal(server)
		client.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(client)
		ask := func(args ...string) {
			t.Helper()
			if _, err := client.Write(wire.AppendCommandStrings(nil, args...)); err != nil {
				t.Fatal(err)
			}
		}
		expect := func(kind byte, num int64) {
			t.Helper()
			v, err := wire.ReadReply(br)
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind != kind || (kind == ':' && v.Num != num) {
				t.Fatalf("lease %v: got %q %d %q, want %q %d", now, v.Kind, v.Num, v.Str, kind, num)
			}
		}
		want := int64(9)
		if now {
			want = 8
		}
		// Nothing waits: answered, by the lease when it holds.
		ask("GOBLIN.READINDEX")
		expect(':', want)
		// An entry waits for its apply: the read index behind it must
		// not come back first.
		ask("GOBLIN.APPLY", string((&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil)))
		ask("GOBLIN.READINDEX")
		time.Sleep(50 * time.Millisecond)
		close(h.release)
		v, err := wire.ReadReply(br)
		if err != nil || v.Kind != '*' {
			t.Fatalf("lease %v: first reply after the entry %q %q, %v; want the entry's", now, v.Kind, v.Str, err)
		}
		expect(':', 9)
		// Waiting over (the writer counts its last reply out just after
		// sending it): the lease answers again.
		time.Sleep(20 * time.Millisecond)
		ask("GOBLIN.READINDEX")
		expect(':', want)
		wantRounds := int64(3)
		if now {
			wantRounds = 1 // only the one queued behind the entry
		}
		if got := h.rounds.Load(); got != wantRounds {
			t.Fatalf("lease %v: %d read-index rounds, want %d", now, got, wantRounds)
		}
		client.Close()
	}
}

// togetherNode records which forwarded entries were proposed inside
// which ProposeTogether call.
type togetherNode struct {
	fuzzNode
	mu      sync.Mutex
	calls   int // ProposeTogether calls
	inside  bool
	batches []int // entries proposed inside each call
	outside int   // entries proposed outside any
}

func (n *togetherNode) ProposeTogether(fn func()) {
	n.mu.Lock()
	n.calls++
	n.inside = true
	n.batches = append(n.batches, 0)
	n.mu.Unlock()
	fn()
	n.mu.Lock()
	n.inside = false
	n.mu.Unlock()
}

func (n *togetherNode) ApplyForwarded(b []byte) (func() (raftfsm.Result, error), func() bool) {
	n.mu.Lock()
	if n.inside {
		n.batches[len(n.batches)-1]++
	} else {
		n.outside++
	}
	n.mu.Unlock()
	return n.fuzzNode.ApplyForwarded(b)
}

// The entries a follower's pipeline sends in one write are proposed as
// one batch, so the first does not go to Raft alone with the others
// waiting for its fdatasync.
func TestInternalEntriesOfOneReadProposedTogether(t *testing.T) {
	n := &togetherNode{}
	c := &Cluster{cfg: Config{ID: "n1"}, node: n, log: hclog.NewNullLogger()}
	client, server := net.Pipe()
	defer client.Close()
	go c.serveInternal(server)
	client.SetDeadline(time.Now().Add(5 * time.Second))
	const entries = 8
	var req []byte
	for range entries {
		req = wire.AppendCommandStrings(req, "GOBLIN.APPLY", string((&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil)))
	}
	go client.Write(req)
	br := bufio.NewReader(client)
	for i := range entries {
		if v, err := wire.ReadReply(br); err != nil || v.Kind != '*' {
			t.Fatalf("reply %d: %q %q, %v", i, v.Kind, v.Str, err)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.outside != 0 {
		t.Fatalf("%d entries proposed outside ProposeTogether", n.outside)
	}
	if largest := slices.Max(n.batches); largest < 2 {
		t.Fatalf("entries written together proposed in batches of %v", n.batches)
	}
}

// stepNode answers its first forwarded entry once the second has been
// proposed (and queued behind it), and holds the second until release:
// the first is a batch just applied, the second one in the next batch.
type stepNode struct {
	fuzzNode
	calls   atomic.Int64
	second  chan struct{}
	release chan struct{}
}

func (n *stepNode) ApplyForwarded([]byte) (func() (raftfsm.Result, error), func() bool) {
	if n.calls.Add(1) == 1 {
		return func() (raftfsm.Result, error) {
			<-n.second
			time.Sleep(20 * time.Millisecond) // the reader queues it meanwhile
			return raftfsm.Result{Index: 1, Reply: []byte("+OK\r\n")}, nil
		}, func() bool { return true }
	}
	close(n.second)
	released := func() bool {
		select {
		case <-n.release:
			return true
		default:
			return false
		}
	}
	return func() (raftfsm.Result, error) {
		<-n.release
		return raftfsm.Result{Index: 2, Reply: []byte("+OK\r\n")}, nil
	}, released
}

// An entry's reply goes out while the entry queued behind it waits for
// its own commit round, not together with that one's: a follower's
// clients are answered when their batch is applied.
func TestInternalReplyNotHeldBehindTheNextBatch(t *testing.T) {
	n := &stepNode{second: make(chan struct{}), release: make(chan struct{})}
	c := &Cluster{cfg: Config{ID: "n1"}, node: n, log: hclog.NewNullLogger()}
	client, server := net.Pipe()
	defer client.Close()
	go c.serveInternal(server)
	var req []byte
	for range 2 {
		req = wire.AppendCommandStrings(req, "GOBLIN.APPLY", string((&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil)))
	}
	go client.Write(req)
	br := bufio.NewReader(client)
	client.SetReadDeadline(time.Now().Add(2 * time.Second))
	v, err := wire.ReadReply(br)
	if err != nil || v.Kind != '*' || len(v.Array) != 2 || v.Array[0].Num != 1 {
		t.Fatalf("first entry's reply while the second waits: %q %v, %v", v.Kind, v.Array, err)
	}
	close(n.release)
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if v, err := wire.ReadReply(br); err != nil || v.Kind != '*' || len(v.Array) != 2 || v.Array[0].Num != 2 {
		t.Fatalf("second entry's reply: %q %v, %v", v.Kind, v.Array, err)
	}
}

// followingNode follows n1 in term 7, last heard from 42 ms ago.
type followingNode struct{ fuzzNode }

func (followingNode) FollowsHere(leader string, term uint64) (time.Duration, error) {
	if leader != "n1" || term != 7 {
		return 0, node.ErrNotFollowing
	}
	return 42 * time.Millisecond, nil
}

// A leader's confirmation round over the plane: the follower's answer
// (the age of its last contact, or NOTFOLLOWING) comes back as it gave
// it, and a node of a build without the request answers ErrPeerTooOld,
// so the leader falls back to Raft's round.
func TestFollowsOverThePlane(t *testing.T) {
	follower := &Cluster{cfg: Config{ID: "n2"}, node: followingNode{}, log: hclog.NewNullLogger()}
	old := func(nc net.Conn) { // answers every request as a build without GOBLIN.FOLLOWS
		rd := bufio.NewReader(nc)
		for {
			if _, err := wire.ReadReply(rd); err != nil {
				nc.Close()
				return
			}
			nc.Write([]byte("-ERR unknown internal request 'GOBLIN.FOLLOWS'\r\n"))
		}
	}
	f := newForwarder(func(id string) (string, bool) { return id, true }, func(addr string) (net.Conn, error) {
		client, server := net.Pipe()
		if addr == "old" {
			go old(server)
		} else {
			go follower.serveInternal(server)
		}
		return client, nil
	})
	defer f.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if age, err := f.follows(ctx, "n2", "n1", 7); err != nil || age != 42*time.Millisecond {
		t.Fatalf("n2 asked by n1 in term 7: %v %v, want 42ms", age, err)
	}
	for _, term := range []uint64{6, 8} {
		if _, err := f.follows(ctx, "n2", "n1", term); !errors.Is(err, node.ErrNotFollowing) {
			t.Fatalf("n2 asked by n1 in term %d: %v, want ErrNotFollowing", term, err)
		}
	}
	if _, err := f.follows(ctx, "n2", "n3", 7); !errors.Is(err, node.ErrNotFollowing) {
		t.Fatalf("n2 asked by n3: %v, want ErrNotFollowing", err)
	}
	if _, err := f.follows(ctx, "old", "n1", 7); !errors.Is(err, node.ErrPeerTooOld) {
		t.Fatalf("a node of an older build: %v, want ErrPeerTooOld", err)
	}
}
