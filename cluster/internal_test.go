package cluster

import (
	"bufio"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

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

func (h *heldNode) ApplyForwarded([]byte) func() (raftfsm.Result, error) {
	return func() (raftfsm.Result, error) {
		<-h.release
		return raftfsm.Result{Index: 5, Reply: []byte("+OK\r\n")}, nil
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
