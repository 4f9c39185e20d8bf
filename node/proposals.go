package node

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/goblindb/goblin/raftfsm"
)

// proposals is the table of this node's entries in flight, by proposal
// ID: what lets a node tell the truth about a write when leadership
// changes before it learns the write's fate.
//
// Every entry a client's write becomes carries a proposal header
// (raftfsm/proposal.go): a proposal ID from this table and the term of
// the leader it is handed to. The state machine, on this node, reports
// the result of every entry with a header, and the table keeps the
// result of each of its own. The entry takes effect only if committed in
// its term, so once this node has applied an entry of a later term the
// answer is final: the write took effect, with the reported result, or
// it never will (ErrNotApplied). The write path (write.go) waits for that
// when the leader's answer is lost (Pending.resolve).
//
// IDs start at a random value per process and count up, so entries of
// different nodes, and of one node's runs, do not share IDs.
type proposals struct {
	next atomic.Uint64
	mu   sync.Mutex
	m    map[uint64]*proposal
	// Counts of the writes whose leader's answer was lost, by what
	// resolve learned: applied, not applied, or nothing in time.
	resolvedApplied, resolvedNotApplied, resolvedUncertain atomic.Uint64
}

// proposal is one entry in flight: its ID, the term it is fenced to,
// and, once this node applied it, its result.
type proposal struct {
	id, term uint64
	// restores is raftfsm.FSM.Restores when it was registered: a snapshot
	// restored since may hold the entry without it being reported.
	restores uint64
	applied  bool
	res      raftfsm.Result
	// ch, made by watch for a waiter, is closed once the entry is applied.
	ch chan struct{}
}

func newProposals() *proposals {
	ps := &proposals{m: map[uint64]*proposal{}}
	var b [8]byte
	rand.Read(b[:])
	ps.next.Store(binary.LittleEndian.Uint64(b[:]) >> 1)
	return ps
}

// newID returns a fresh proposal ID (never zero: zero means none).
func (ps *proposals) newID() uint64 {
	for {
		if id := ps.next.Add(1); id != 0 {
			return id
		}
	}
}

// add registers p; its result is recorded once applied here.
func (ps *proposals) add(p *proposal) {
	ps.mu.Lock()
	ps.m[p.id] = p
	ps.mu.Unlock()
}

// remove forgets p.
func (ps *proposals) remove(p *proposal) {
	ps.mu.Lock()
	if ps.m[p.id] == p {
		delete(ps.m, p.id)
	}
	ps.mu.Unlock()
}

// applied is the state machine's report (raftfsm.FSM.OnProposal).
func (ps *proposals) applied(id uint64, res raftfsm.Result) {
	ps.mu.Lock()
	if p := ps.m[id]; p != nil {
		p.applied, p.res = true, res
		if p.ch != nil {
			close(p.ch)
			p.ch = nil
		}
	}
	ps.mu.Unlock()
}

// result returns p's result if it was applied here.
func (ps *proposals) result(p *proposal) (raftfsm.Result, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return p.res, p.applied
}

// watch returns p's result if it was applied here, or else a channel
// closed once it is (made only here: writes that need no waiting make
// none).
func (ps *proposals) watch(p *proposal) (raftfsm.Result, bool, <-chan struct{}) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p.applied {
		return p.res, true, nil
	}
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return raftfsm.Result{}, false, p.ch
}
