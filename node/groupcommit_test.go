package node

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/raftfsm"
)

// Entries proposed while a batch is in flight reach Raft together, as one
// log entry, every writer's entries apply in the order it proposed them,
// and each gets its own result.
func TestGroupCommitBatchesAndKeepsOrder(t *testing.T) {
	n := startNode(t, Config{})
	const writers, perWriter = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("w%d", w)
			// Pipelined like a client: propose everything, then wait in order.
			waits := make([]func() (raftfsm.Result, error), 0, perWriter)
			for i := range perWriter {
				// ZINCRBY's reply is the running total, so a reordered or
				// lost entry shows in the replies.
				e := &raftfsm.Entry{Op: raftfsm.OpCommand, Time: n.Now(), Proto: 2,
					Commands: []raftfsm.Command{{Argv: [][]byte{[]byte("ZINCRBY"), []byte(key), []byte(fmt.Sprint(i + 1)), []byte("m")}}}}
				waits = append(waits, n.Propose(e))
			}
			total := 0
			for i, wait := range waits {
				res, err := wait()
				if err != nil {
					errs <- fmt.Errorf("writer %d entry %d: %v", w, i, err)
					return
				}
				total += i + 1
				want := fmt.Sprintf("$%d\r\n%d\r\n", len(fmt.Sprint(total)), total)
				if string(res.Reply) != want {
					errs <- fmt.Errorf("writer %d entry %d: reply %q, want %q", w, i, res.Reply, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	batches, entries, largest := n.GroupCommitStats()
	t.Logf("group commit: %d entries in %d batches, largest %d", entries, batches, largest)
	if entries < writers*perWriter {
		t.Errorf("group commit counted %d entries, want at least %d", entries, writers*perWriter)
	}
	if largest < 2 {
		t.Errorf("no batch held more than one entry (%d batches): entries were not grouped", batches)
	}
	// Each batch's commit round is measured once it is applied.
	if r := n.Metrics().GroupRounds; r.Count == 0 || r.Count > batches || r.Sum <= 0 {
		t.Errorf("commit rounds: %d measured (%v in all) for %d batches", r.Count, r.Sum, batches)
	} else {
		t.Logf("commit rounds: %d, %v on average", r.Count, r.Sum/time.Duration(r.Count))
	}
	// A batch is one log entry, a group (raftfsm/group.go), not one each.
	if last := n.raft.LastIndex(); last >= uint64(writers*perWriter) {
		t.Errorf("the log holds %d entries for %d proposals: batches were not grouped", last, writers*perWriter)
	}
	for w := range writers {
		want := fmt.Sprint(perWriter * (perWriter + 1) / 2)
		if got := score(n, fmt.Sprintf("w%d", w), "m"); got != want {
			t.Errorf("w%d: score %s, want %s", w, got, want)
		}
	}
}

// BenchmarkGroupCommit: 50 writers, one ZADD in flight each, on a single
// node with --fsync always, with group commit and without, alternated by
// -count. It reports entries per batch handed to Raft.
func BenchmarkGroupCommit(b *testing.B) {
	for _, mode := range []struct {
		name string
		off  bool
	}{{"grouped", false}, {"direct", true}} {
		b.Run(mode.name, func(b *testing.B) {
			n := startNode(b, Config{Fsync: FsyncAlways, noGroupCommit: mode.off})
			const writers = 50
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						if _, err := n.Propose(zaddEntry(fmt.Sprintf("k%d", w), fmt.Sprint(i), int(i)))(); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			batches, entries, _ := n.GroupCommitStats()
			b.ReportMetric(float64(entries)/float64(max(batches, 1)), "entries/batch")
		})
	}
}

// A change of leadership forgets the groups in flight: no longer leading,
// the node applies entries read back from its log, which groupApplied
// cannot find, and Raft's future answers their members.
func TestLeadershipChangeForgetsGroupsInFlight(t *testing.T) {
	g := newGroupCommit(make(chan struct{}))
	data := raftfsm.AppendGroup(nil, [][]byte{{1}, {2}})
	gf := &groupFuture{done: make(chan struct{})}
	g.track(gf, data)
	g.leadershipChanged()
	if len(g.inflight) != 0 {
		t.Fatalf("%d groups kept after a leadership change", len(g.inflight))
	}
	g.groupApplied(data, 7, raftfsm.GroupResult{{}, {}})
	select {
	case <-gf.done:
		t.Fatal("a forgotten group was answered by groupApplied")
	default:
	}
	// One tracked and applied is answered, and forgotten.
	gf2 := &groupFuture{done: make(chan struct{})}
	g.track(gf2, data)
	g.groupApplied(data, 8, raftfsm.GroupResult{{Index: 8}, {Index: 8}})
	select {
	case <-gf2.done:
	default:
		t.Fatal("an applied group was not answered")
	}
	if gf2.index != 8 || len(g.inflight) != 0 {
		t.Fatalf("index %d, %d groups kept", gf2.index, len(g.inflight))
	}
}

// applyingRaft stands in for Raft whose state machine applies an entry,
// and reports it applied, before Apply has returned to its caller: what
// happens when the caller's thread loses its CPU for the length of an
// fdatasync. Entries Apply is given while pending is set stay in flight
// instead, as though still being written.
type applyingRaft struct {
	g       *groupCommit
	mu      sync.Mutex
	pending bool
	applied [][]byte
	// timeouts: how long each Apply was let wait for Raft's queue.
	timeouts []time.Duration
}

func (r *applyingRaft) Apply(data []byte, timeout time.Duration) raft.ApplyFuture {
	r.mu.Lock()
	r.applied = append(r.applied, data)
	r.timeouts = append(r.timeouts, timeout)
	pending := r.pending
	r.mu.Unlock()
	if !pending {
		r.g.applied()
	}
	return errorFuture{}
}

func (r *applyingRaft) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.applied)
}

// A batch the state machine applies before handing it over is done
// leaves nothing in flight: the next entry goes to Raft at once instead
// of being held until holdLimit, with every client waiting (a stall of
// 100 ms a few times a second under redis-benchmark -c 50).
func TestBatchAppliedWhileHandedOverLeavesNothingInFlight(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	g := newGroupCommit(stop)
	r := &applyingRaft{g: g, pending: true}
	g.raft = r
	g.grouped.Store(true)
	go g.run()

	g.submit([]byte{1}) // in flight
	held := []raft.ApplyFuture{g.submit([]byte{2}), g.submit([]byte{3})}
	if r.count() != 1 {
		t.Fatalf("%d entries reached Raft with one in flight, want 1", r.count())
	}
	r.mu.Lock()
	r.pending = false // the held batch is applied as soon as it is handed over
	r.mu.Unlock()
	g.applied() // the first entry is applied: the flusher hands the others over
	for _, f := range held {
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
	}
	if r.count() != 2 {
		t.Fatalf("%d entries reached Raft, want 2 (one, then a group of two)", r.count())
	}
	g.submit([]byte{4})
	if r.count() != 3 {
		t.Fatal("an entry proposed with nothing in flight was held")
	}
}

// An entry handed to Raft with nothing of group commit's in flight waits
// for a place in Raft's queue without a timer, since the queue has room;
// one handed over behind a batch still in flight (at holdLimit) keeps
// enqueueTimeout, as do the later groups of a batch too large for one.
func TestEnqueueWaitWithoutTimerOnlyWithNothingInFlight(t *testing.T) {
	g := newGroupCommit(make(chan struct{}))
	g.oneThread = false
	r := &applyingRaft{g: g, pending: true}
	g.raft = r
	g.grouped.Store(true)

	g.submit([]byte{1}) // nothing in flight: handed over at once
	g.submit([]byte{2}) // held behind it
	g.submit([]byte{3})
	g.mu.Lock()
	g.handOver() // as the flusher does at holdLimit, the first still in flight
	g.mu.Unlock()
	r.mu.Lock()
	got := append([]time.Duration(nil), r.timeouts...)
	r.mu.Unlock()
	if want := []time.Duration{0, enqueueTimeout}; !slices.Equal(got, want) {
		t.Fatalf("timeouts %v, want %v", got, want)
	}
	if enqueueWait(true, maxAppendEntries/4-1) != 0 || enqueueWait(true, maxAppendEntries/4) != enqueueTimeout {
		t.Fatal("the groups of a large batch past the queue's sure room wait without a timer")
	}
}

// With one thread running Go code, an entry submitted with nothing in
// flight waits for the goroutines that can run to submit theirs, and goes
// to Raft in one batch with them, where it went alone and the others
// waited for its fdatasync.
func TestOneThreadBatchesTheRunnable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	defer close(stop)
	g := newGroupCommit(stop)
	if !g.oneThread {
		t.Fatal("a group commit made with GOMAXPROCS 1 does not know it runs on one thread")
	}
	r := &applyingRaft{g: g, pending: true}
	g.raft = r
	g.grouped.Store(true)
	go g.run()

	const writers = 20
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			g.submit([]byte{byte(i)})
		}()
	}
	close(gate) // all runnable at once, as after a poll of the network
	wg.Wait()
	g.mu.Lock()
	batches, entries, largest := g.batches, g.entries, g.largest
	g.mu.Unlock()
	t.Logf("%d entries in %d batches, largest %d", entries, batches, largest)
	if largest < writers/2 {
		t.Errorf("the largest batch held %d of %d entries submitted together", largest, writers)
	}
	if r.count() != int(batches) {
		t.Errorf("%d batches counted, %d reached Raft", batches, r.count())
	}
}

// Entries held while a batch stays in flight go to Raft after holdLimit,
// counted as overdue.
func TestHeldPastTheLimitIsHandedOverAndCounted(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	g := newGroupCommit(stop)
	r := &applyingRaft{g: g, pending: true} // nothing is ever applied
	g.raft = r
	go g.run()

	g.submit([]byte{1})
	start := time.Now()
	if err := g.submit([]byte{2}).Error(); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < holdLimit {
		t.Errorf("held %v with a batch in flight, want holdLimit (%v)", waited, holdLimit)
	}
	if r.count() != 2 || g.overdue.Load() != 1 {
		t.Fatalf("%d entries reached Raft, %d batches overdue; want 2 and 1", r.count(), g.overdue.Load())
	}
}

// The flusher times a held batch from when it first saw it: a batch it
// saw held and that went to Raft otherwise (at the end of a together)
// does not make the next batch, held soon after, count as overdue and go
// to Raft with one still in flight when the first one's time is up.
func TestOverdueCountsTheBatchHeldNow(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	g := newGroupCommit(stop)
	g.oneThread = false
	r := &applyingRaft{g: g, pending: true}
	g.raft = r
	go g.run()

	g.submit([]byte{1}) // in flight
	start := time.Now()
	g.together(func() {
		g.submit([]byte{2}) // held: the flusher starts timing it
		time.Sleep(30 * time.Millisecond)
		g.applied() // 1 applied; 2 waits for the together to end
		time.Sleep(30 * time.Millisecond)
	})
	if took := time.Since(start); took > holdLimit-30*time.Millisecond {
		t.Skipf("the together took %v: too close to holdLimit to tell", took)
	}
	if r.count() != 2 {
		t.Fatalf("%d entries reached Raft, want 2 (the together's end hands 2 over)", r.count())
	}
	held := time.Now()
	f := g.submit([]byte{3}) // held behind 2, for 2's round or holdLimit
	// Past holdLimit from when 2 was held, well before it from 3.
	time.Sleep(holdLimit + 15*time.Millisecond - time.Since(start))
	n, o := r.count(), g.overdue.Load()
	if waited := time.Since(held); waited > holdLimit-10*time.Millisecond {
		t.Skipf("3 was held %v when looked at: too close to holdLimit to tell", waited)
	}
	if n != 2 || o != 0 {
		t.Fatalf("%d entries reached Raft, %d batches overdue, holdLimit after 2 was held and less after 3 was; want 2 and 0", n, o)
	}
	g.applied()
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	if r.count() != 3 {
		t.Fatalf("%d entries reached Raft after 2 was applied, want 3", r.count())
	}
}

// answeringRaft stands in for Raft whose futures answer at once with
// resp, the state machine's answer to the entry.
type answeringRaft struct {
	resp    interface{}
	applied [][]byte
}

func (r *answeringRaft) Apply(data []byte, _ time.Duration) raft.ApplyFuture {
	r.applied = append(r.applied, data)
	return answeredFuture{resp: r.resp, index: uint64(len(r.applied))}
}

type answeredFuture struct {
	resp  interface{}
	index uint64
}

func (f answeredFuture) Error() error          { return nil }
func (f answeredFuture) Response() interface{} { return f.resp }
func (f answeredFuture) Index() uint64         { return f.index }

// A held entry answers nothing until its batch is handed to Raft, and
// then as the hand-over made it: a member of a group with its own result
// from the state machine; every member with the group's result when the
// group failed as a whole (Raft's future answers a plain Result, and the
// state machine reports no group); an entry handed over alone with Raft's
// future's answer.
func TestHeldEntriesAnswerAsHandedOver(t *testing.T) {
	held := func(r *answeringRaft, n int) (*groupCommit, []*heldFuture) {
		g := newGroupCommit(make(chan struct{}))
		g.raft = r
		g.grouped.Store(true)
		g.busy.Store(true) // a batch in flight: what is submitted is held
		var hs []*heldFuture
		for i := range n {
			hs = append(hs, g.submit([]byte{byte(i + 1)}).(*heldFuture))
		}
		return g, hs
	}
	handOver := func(g *groupCommit) {
		g.mu.Lock()
		g.handOver()
		g.mu.Unlock()
	}
	reply := func(h *heldFuture) string {
		res, ok := h.result()
		boxed, _ := h.Response().(raftfsm.Result)
		if !ok || string(boxed.Reply) != string(res.Reply) {
			t.Fatalf("result %q (%v), Response %q", res.Reply, ok, boxed.Reply)
		}
		return string(res.Reply)
	}

	t.Run("group", func(t *testing.T) {
		results := raftfsm.GroupResult{{Index: 1, Reply: []byte("+a")}, {Index: 1, Reply: []byte("+b")}}
		r := &answeringRaft{resp: results}
		g, hs := held(r, 2)
		answered := make(chan error, 1)
		go func() { answered <- hs[0].Error() }()
		select {
		case err := <-answered:
			t.Fatalf("a held entry answered (%v) before its batch was handed over", err)
		case <-time.After(20 * time.Millisecond):
		}
		handOver(g)
		if len(r.applied) != 1 {
			t.Fatalf("%d entries reached Raft, want one group", len(r.applied))
		}
		g.groupApplied(r.applied[0], 1, results)
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		if a, b := reply(hs[0]), reply(hs[1]); a != "+a" || b != "+b" {
			t.Fatalf("members answered %q and %q, want +a and +b", a, b)
		}
		if hs[1].Index() != 1 {
			t.Fatalf("index %d, want 1", hs[1].Index())
		}
	})
	t.Run("group failed as a whole", func(t *testing.T) {
		r := &answeringRaft{resp: raftfsm.Result{Index: 1, Reply: []byte("-ERR bad group")}}
		g, hs := held(r, 3)
		handOver(g)
		for i, h := range hs {
			if err := h.Error(); err != nil {
				t.Fatal(err)
			}
			if got := reply(h); got != "-ERR bad group" {
				t.Fatalf("member %d answered %q, want the group's result", i, got)
			}
		}
	})
	t.Run("alone", func(t *testing.T) {
		r := &answeringRaft{resp: raftfsm.Result{Index: 1, Reply: []byte("+c")}}
		g, hs := held(r, 1)
		handOver(g)
		if len(r.applied) != 1 || hs[0].g != nil {
			t.Fatal("a batch of one was not handed over as a plain entry")
		}
		if err := hs[0].Error(); err != nil {
			t.Fatal(err)
		}
		if got := reply(hs[0]); got != "+c" {
			t.Fatalf("answered %q, want +c", got)
		}
	})
}

// unreadRaft stands in for Raft, counting the reads of its futures.
type unreadRaft struct {
	applied [][]byte
	reads   atomic.Int64
}

func (r *unreadRaft) Apply(data []byte, _ time.Duration) raft.ApplyFuture {
	r.applied = append(r.applied, data)
	return countedFuture{&r.reads}
}

type countedFuture struct{ reads *atomic.Int64 }

func (f countedFuture) Error() error          { f.reads.Add(1); return nil }
func (f countedFuture) Response() interface{} { return nil }
func (f countedFuture) Index() uint64         { return 0 }

// A held entry says it is answered, without waiting, once the state
// machine has applied its group, and not before (held, or handed over
// and in flight); its wait then returns the state machine's answer
// without reading Raft's future. An entry handed over alone cannot tell,
// nor can a Pending waiting for one; one refused before the log can.
func TestHeldEntryAnsweredOnceItsGroupIsApplied(t *testing.T) {
	held := func(n int) (*groupCommit, *unreadRaft, []*heldFuture) {
		r := &unreadRaft{}
		g := newGroupCommit(make(chan struct{}))
		g.raft = r
		g.grouped.Store(true)
		g.busy.Store(true)
		var hs []*heldFuture
		for i := range n {
			hs = append(hs, g.submit([]byte{byte(i + 1)}).(*heldFuture))
		}
		return g, r, hs
	}
	handOver := func(g *groupCommit) {
		g.mu.Lock()
		g.handOver()
		g.mu.Unlock()
	}
	g, r, hs := held(2)
	for i, h := range hs {
		if h.answered() || (&Pending{f: h}).Answered() {
			t.Fatalf("held entry %d says it is answered", i)
		}
	}
	handOver(g)
	for i, h := range hs {
		if h.answered() {
			t.Fatalf("entry %d in flight says it is answered", i)
		}
	}
	g.groupApplied(r.applied[0], 4, raftfsm.GroupResult{{Index: 4, Reply: []byte("+a")}, {Index: 4, Reply: []byte("+b")}})
	for i, h := range hs {
		if !h.answered() || !(&Pending{f: h}).Answered() {
			t.Fatalf("entry %d of an applied group says it is not answered", i)
		}
		if err := h.Error(); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if res, _ := hs[1].result(); string(res.Reply) != "+b" {
		t.Fatalf("second entry answered %q, want +b", res.Reply)
	}
	if n := r.reads.Load(); n != 0 {
		t.Fatalf("Raft's future read %d times after the state machine answered", n)
	}

	g, _, hs = held(1)
	handOver(g)
	if hs[0].answered() {
		t.Fatal("an entry handed over alone says it is answered")
	}
	if !(&Pending{err: ErrClosed}).Answered() {
		t.Fatal("an entry refused before the log says it is not answered")
	}
	// Refused by a node that no longer leads: Wait proposes it again to
	// the next leader, unless the entry is a follower's.
	clustered := &Node{peers: struct{ Peers }{}}
	if (&Pending{n: clustered, err: ErrNotLeader}).Answered() {
		t.Fatal("an entry Wait will propose again says it is answered")
	}
	if !(&Pending{n: clustered, err: ErrNotLeader, remote: true}).Answered() {
		t.Fatal("a follower's entry refused by a node that no longer leads says it is not answered")
	}
}

// What is proposed inside ProposeTogether reaches Raft as one batch, even
// with nothing in flight (where one proposal alone goes at once); and
// should the caller wait for one of them inside, they are handed over at
// holdLimit all the same.
func TestProposeTogether(t *testing.T) {
	n := startNode(t, Config{})
	zadd := func(m string) *raftfsm.Entry {
		return &raftfsm.Entry{Op: raftfsm.OpCommand, Time: n.Now(), Proto: 2,
			Commands: []raftfsm.Command{{Argv: [][]byte{[]byte("ZADD"), []byte("k"), []byte("1"), []byte(m)}}}}
	}
	if _, err := n.Propose(zadd("first"))(); err != nil {
		t.Fatal(err)
	}
	b0, e0, _ := n.GroupCommitStats()
	var waits []func() (raftfsm.Result, error)
	n.ProposeTogether(func() {
		for i := range 10 {
			waits = append(waits, n.Propose(zadd(fmt.Sprint("m", i))))
		}
	})
	for i, w := range waits {
		if res, err := w(); err != nil || string(res.Reply) != ":1\r\n" {
			t.Fatalf("entry %d: %q, %v", i, res.Reply, err)
		}
	}
	if b, e, _ := n.GroupCommitStats(); b-b0 != 1 || e-e0 != 10 {
		t.Fatalf("ProposeTogether made %d batches of %d entries, want one of 10", b-b0, e-e0)
	}
	start := time.Now()
	n.ProposeTogether(func() {
		if _, err := n.Propose(zadd("waited"))(); err != nil {
			t.Error(err)
		}
	})
	if d := time.Since(start); d < holdLimit/2 {
		t.Fatalf("a proposal waited for inside ProposeTogether was answered in %v, before holdLimit", d)
	}
}
