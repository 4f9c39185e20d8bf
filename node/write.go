package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/node/wal"
	"github.com/goblindb/goblin/raftfsm"
)

// enqueueTimeout bounds how long a proposal waits to enter Raft's queue.
const enqueueTimeout = 5 * time.Second

// maxAppendEntries is Raft's MaxAppendEntries: how many proposals its
// queue holds, and how many entries one request to a follower carries.
const maxAppendEntries = 64

// Pending is a proposed entry whose outcome is not known yet: either a
// local Raft future (on the leader) or an entry forwarded to the leader.
//
// Its answer never claims more than the node knows. An entry refused
// before it reached any log fails with an error that says so (ErrNotLeader,
// ErrNoLeader, ErrTimeout, ErrBadEntry); one that was committed answers its
// result. When leadership changes while the entry is in flight, the node
// waits, up to OutcomeWait, until it can tell which happened (resolve):
// then the entry's real result, or ErrNotApplied; ErrUncertain only when it
// could not learn it in time.
type Pending struct {
	n *Node
	// data is the entry, encoded with a proposal header whose term is set
	// by each attempt; deadline bounds the search for a leader.
	data     []byte
	deadline time.Time
	// prop is the current attempt's proposal (ID, term fence, result).
	prop proposal
	// remote marks a leader proposing a follower's entry: it neither
	// registers nor resolves it (the follower does), and fence is the
	// term the follower addressed it to.
	remote bool
	fence  uint64
	// here: a forwarded entry is answered only once applied on this node
	// too (Apply, and entries that change this node's own behaviour, such
	// as ACL changes); otherwise as soon as the leader answers, with the
	// index the caller waits for before it reads here (Propose).
	here bool
	// The current attempt: a local future, an entry sent to the leader,
	// or an error before either.
	f   raft.ApplyFuture
	fwd Forwarded
	err error
	// split waits for a write proposed in pieces instead (chunks.go).
	split func() (raftfsm.Result, error)
}

// Propose hands e to the log without waiting and returns a function that
// waits for the result. On the leader the entry goes to Raft; on a
// follower it is forwarded to the leader. A data entry (commands and
// transactions) forwarded by a follower is answered as soon as the leader
// answers: it is committed, but it may not be applied here yet, so a
// caller that then reads here waits for Result.Index first (WaitApplied)
// to read its own write. Any other entry is answered once applied here.
// Entries proposed by one goroutine are committed in the order proposed.
func (n *Node) Propose(e *raftfsm.Entry) func() (raftfsm.Result, error) {
	return n.propose(e, !isData(e.Op)).Wait
}

// ProposesNow reports whether a write proposed now goes to this node's
// own log without waiting: it leads, and the barrier of its term is
// applied (resp's event loop runs only such writes).
func (n *Node) ProposesNow() bool {
	return !n.closed.Load() && n.IsLeader() && n.Ready()
}

// ProposeTogether runs fn; the writes it proposes to this node's log go
// to Raft together, as one batch, once it returns.
func (n *Node) ProposeTogether(fn func()) { n.group.together(fn) }

// isData reports whether entries of op only change the data, which a
// reader waits for by index, rather than how this node behaves.
func isData(op raftfsm.Op) bool {
	return op == raftfsm.OpCommand || op == raftfsm.OpBatch || op == raftfsm.OpMulti
}

// WaitApplied waits until this node has applied index: what a caller
// waits for, with a forwarded write's Result.Index, before reading its
// own write here. Without a deadline in ctx it waits at most readyWait.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	if n.fsm.Applied() >= index {
		return nil
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	return n.waitApplied(ctx, index)
}

// propose hands e to the log; here: a forwarded e is answered only once
// applied on this node too (Pending.here).
func (n *Node) propose(e *raftfsm.Entry, here bool) *Pending {
	if n.closed.Load() {
		return &Pending{err: ErrClosed}
	}
	if err := n.writeRefused(); err != nil {
		return &Pending{err: err}
	}
	p := &Pending{n: n, deadline: time.Now().Add(n.cfg.LeaderWait), here: here}
	// The header is written with a placeholder term; each attempt sets
	// the term of the leader it goes to (SetProposal).
	h := *e
	h.Term, h.Proposal = 0, n.props.newID()
	p.data = h.Encode(nil)
	p.prop.id = h.Proposal
	if n.peers != nil && len(p.data) > maxClusterEntryBytes && isData(e.Op) {
		if split := n.proposeSplit(p.data, e.Time, here); split != nil {
			return &Pending{split: split}
		}
	}
	if err := n.entrySizeErr(p.data); err != nil {
		return &Pending{err: err}
	}
	if n.IsLeader() {
		n.proposeLocal(p)
	} else {
		n.forward(p)
	}
	return p
}

// proposeLocal hands p to the local Raft, which refuses it unless this
// node leads, fenced to the term it leads in. A new leader first waits
// for its term barrier and packed rules to be applied, so no key is
// created under stale rules.
func (n *Node) proposeLocal(p *Pending) {
	if !n.IsLeader() {
		p.err = n.notLeaderErr()
		return
	}
	if err := n.writeRefused(); err != nil {
		p.err = err
		return
	}
	if !n.Ready() {
		ctx, cancel := context.WithTimeout(context.Background(), readyWait)
		err := n.waitReady(ctx)
		cancel()
		if err != nil {
			p.err = err
			return
		}
	}
	term := n.readyTerm.Load()
	if term == 0 || (p.fence != 0 && p.fence != term) {
		// Leadership moved on, or a follower addressed the entry to
		// another term of this node's.
		p.err = ErrNotLeader
		return
	}
	if q := n.admitMemory(p.data, term); q != nil {
		// Over maxmemory: refused, or split around what would grow it.
		p.f, p.err = q.f, q.err
		return
	}
	p.start(term)
	p.f = n.group.submit(p.data)
}

// MaxEntryBytes is the largest log entry a write may make on a single
// node: what the log stores in one entry (node/wal's MaxEntryData), less
// room for the group commit wrapper. A larger write (one command, a
// pipeline's gathered writes, a transaction) is refused before it is
// proposed, with ErrEntryTooLarge; the log never sees it.
const MaxEntryBytes = wal.MaxEntryData - 64<<10

// MaxClusterEntryBytes is the largest log entry in cluster mode, the size
// group commit gives its groups at most. Raft's transport sends a
// follower up to maxAppendEntries entries in one request that must be
// done within its 10 s timeout, and decodes each entry's data in 256 KiB
// steps, copying what it has at each step (hashicorp/go-msgpack), so a
// follower's time to take an entry grows with the square of its size,
// and its process stalls while it copies. Measured on a 3-node cluster: a 100 MB write
// never reached the followers (each try ran past the timeout) and cost an
// election every time; 48 MB stalled followers 406 ms, past the heartbeat
// timeout; a follower restarted behind 100 entries of 16 MB never caught
// up (every request of them timed out), behind 300 of 2 MB only after a
// timeout; entries of 1 MiB make requests of 64 MiB at most. A larger
// data write is proposed in pieces (chunks.go).
const MaxClusterEntryBytes = 1 << 20

// maxEntryBytes and maxClusterEntryBytes are the limits entrySizeErr
// applies (tests lower them).
var maxEntryBytes, maxClusterEntryBytes = MaxEntryBytes, MaxClusterEntryBytes

// entrySizeErr is ErrEntryTooLarge, with the sizes, for an entry over
// the node's limit.
func (n *Node) entrySizeErr(data []byte) error {
	limit := maxEntryBytes
	if n.peers != nil {
		limit = maxClusterEntryBytes
	}
	if len(data) <= limit {
		return nil
	}
	return fmt.Errorf("%w (%d bytes, at most %d)", ErrEntryTooLarge, len(data), limit)
}

// start fences p's entry to term and, for the node's own entries,
// registers it so the state machine reports its result here.
func (p *Pending) start(term uint64) {
	p.prop.term = term
	raftfsm.SetProposal(p.data, term, p.prop.id)
	if !p.remote {
		p.prop.restores = p.n.fsm.Restores()
		p.n.props.add(&p.prop)
	}
}

// finish forgets p's registration.
func (p *Pending) finish() {
	if !p.remote && p.n != nil {
		p.n.props.remove(&p.prop)
	}
}

// forward sends p to the leader, waiting until p.deadline for one to be
// known (an election at start or after a failure ends) and reachable. It
// returns as soon as the entry is sent, so entries one goroutine forwards
// stay in order. Without peers it only waits for the election, and
// proposes here if this node won it.
func (n *Node) forward(p *Pending) {
	for {
		leader, err := n.awaitLeader(p.deadline)
		if err != nil {
			p.err = err
			return
		}
		if leader == n.cfg.ID || n.peers == nil {
			n.proposeLocal(p)
			return
		}
		// This node's term is the leader's as far as it knows; a leader
		// of another term refuses the entry (ErrNotLeader) unproposed.
		p.start(n.currentTerm())
		fwd, err := n.peers.Apply(leader, p.data)
		if err == nil {
			n.stats.forwardedSent.Add(1)
			p.fwd = fwd
			return
		}
		p.finish()
		// Not sent (the leader died, or gossip does not know its address
		// yet): look again shortly, within the deadline.
		n.log.Debug("forwarding to the leader failed", "leader", leader, "error", err)
		if err := n.pause(p.deadline, retryPause); err != nil {
			p.err = err
			return
		}
	}
}

// retryPause spaces out attempts to reach a leader that did not answer.
const retryPause = 50 * time.Millisecond

// pause sleeps d, or fails with ErrNoLeader if that would pass deadline.
func (n *Node) pause(deadline time.Time, d time.Duration) error {
	if time.Now().Add(d).After(deadline) {
		return ErrNoLeader
	}
	select {
	case <-n.stop:
		return ErrClosed
	case <-time.After(d):
		return nil
	}
}

// Wait waits until the entry is committed and applied (on this node, or
// on the leader for a data entry Propose forwarded) and returns its
// result. An entry refused without being appended to any log
// (the node it reached no longer led) is proposed again to whoever leads
// now, within the deadline; a caller's later entries wait behind this one
// (Wait is called in order), so they stay in order.
func (p *Pending) Wait() (raftfsm.Result, error) {
	if p.split != nil {
		return p.split()
	}
	for {
		res, err := p.wait()
		if p.final(err) || time.Now().After(p.deadline) {
			return res, err
		}
		if p.n.pause(p.deadline, leaderPoll) != nil {
			return res, err
		}
		// The last attempt is certain never to apply: a new one gets a
		// new proposal ID, so nothing reported of the old one can be
		// mistaken for it.
		p.prop = proposal{id: p.n.props.newID()}
		p.f, p.fwd, p.err = nil, nil, nil
		p.n.forward(p)
	}
}

// final reports whether Wait answers err as it is, rather than proposing
// the entry again to whoever leads now.
func (p *Pending) final(err error) bool {
	retry := errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader)
	return !retry || p.remote || p.n == nil || p.n.peers == nil
}

// Answered reports, without waiting, whether Wait would return at once:
// the entry was refused before reaching the log for good, or the state
// machine has applied the batch it went in. It is false when it cannot
// tell (an entry handed to Raft on its own, or forwarded), so a caller
// that prepares for a wait on false (sending what it has buffered) only
// ever prepares once too often.
func (p *Pending) Answered() bool {
	switch {
	case p.split != nil || p.fwd != nil:
		return false
	case p.err != nil:
		return p.final(p.err)
	}
	h, ok := p.f.(*heldFuture)
	return ok && h.answered()
}

func (p *Pending) wait() (raftfsm.Result, error) {
	switch {
	case p.err != nil:
		return raftfsm.Result{}, p.err
	case p.fwd != nil:
		return p.waitForwarded()
	}
	// Raft always answers a local future: with the result, or with an
	// error when leadership is lost or the node shuts down.
	if err := p.f.Error(); err != nil {
		err = translateRaftErr(err)
		if errors.Is(err, ErrUncertain) && !p.remote {
			return p.resolve(time.Now().Add(p.n.cfg.OutcomeWait))
		}
		p.finish()
		return raftfsm.Result{}, err
	}
	p.finish()
	var res raftfsm.Result
	if h, ok := p.f.(*heldFuture); ok {
		res, _ = h.result()
	} else {
		res, _ = p.f.Response().(raftfsm.Result)
	}
	return res, resultErr(res)
}

// waitForwarded waits for the leader's answer to a forwarded entry, and
// on success until the entry is applied here. Without an answer it learns
// the outcome from this node's own log (resolve): as soon as this node has
// applied an entry of a later term, or when OutcomeWait has passed.
func (p *Pending) waitForwarded() (raftfsm.Result, error) {
	n := p.n
	deadline := time.Now().Add(n.cfg.OutcomeWait)
	timer := time.NewTimer(n.cfg.OutcomeWait)
	defer timer.Stop()
	for {
		changed := n.fsm.TermChanged()
		if n.fsm.AppliedTerm() > p.prop.term {
			return p.resolve(deadline)
		}
		select {
		case <-p.fwd.Done():
			index, reply, err := p.fwd.Result()
			if err != nil {
				if refused(err) {
					p.finish()
					return raftfsm.Result{}, err
				}
				return p.resolve(deadline)
			}
			// Committed. Answer once it is applied here when asked to
			// (p.here); past the deadline, answer anyway: the write took
			// effect. Otherwise at once: the caller waits for index
			// before it reads here. Waiting here would wait for the
			// leader to tell this node the commit, with its next append
			// or after CommitTimeout.
			if p.here {
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				if n.waitApplied(ctx, index) != nil {
					n.log.Warn("a forwarded write was committed but is not applied here yet; answering", "index", index)
				}
				cancel()
			}
			p.finish()
			return raftfsm.Result{Index: index, Reply: reply}, nil
		case <-changed:
		case <-timer.C:
			return p.resolve(deadline)
		case <-n.stop:
			p.finish()
			return raftfsm.Result{}, ErrUncertain
		}
	}
}

// refused reports whether err, the leader's answer to a forwarded entry,
// says the entry will never take effect.
func refused(err error) bool {
	for _, e := range []error{ErrNotLeader, ErrNoLeader, ErrTimeout, ErrBadEntry, ErrNotApplied, ErrOOM, ErrLogWrite, raftfsm.ErrEntryFailed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// resolve learns what became of p's entry when the answer of the leader
// it went to is lost (leadership changed while it was in flight, or the
// connection broke). The entry takes effect only if committed in its
// term, p.prop.term (raftfsm/proposal.go), so once this node has applied
// an entry of a later term it knows: either the state machine reported
// the entry applied here, with its result, or it never will be
// (ErrNotApplied). Until deadline it waits for either; after it, or if a
// snapshot restored meanwhile may hold the entry unreported, it answers
// ErrUncertain: this node could not learn the outcome (it is cut off from
// the leader, or none is elected).
func (p *Pending) resolve(deadline time.Time) (raftfsm.Result, error) {
	res, err := p.learn(deadline)
	switch {
	case errors.Is(err, ErrUncertain):
		p.n.props.resolvedUncertain.Add(1)
		p.n.log.Warn("the outcome of a write in flight across a leadership change could not be learned in time",
			"term", p.prop.term, "wait", p.n.cfg.OutcomeWait)
	case errors.Is(err, ErrNotApplied):
		p.n.props.resolvedNotApplied.Add(1)
	default:
		p.n.props.resolvedApplied.Add(1)
	}
	return res, err
}

func (p *Pending) learn(deadline time.Time) (raftfsm.Result, error) {
	n := p.n
	defer p.finish()
	var timer *time.Timer
	for {
		changed := n.fsm.TermChanged()
		decided := n.fsm.AppliedTerm() > p.prop.term
		res, ok, applied := n.props.watch(&p.prop)
		if ok {
			return res, resultErr(res)
		}
		if decided {
			if n.fsm.Restores() != p.prop.restores {
				return raftfsm.Result{}, ErrUncertain
			}
			return raftfsm.Result{}, ErrNotApplied
		}
		if timer == nil {
			d := time.Until(deadline)
			if d <= 0 {
				return raftfsm.Result{}, ErrUncertain
			}
			timer = time.NewTimer(d)
			defer timer.Stop()
		}
		select {
		case <-changed:
		case <-applied:
		case <-timer.C:
			if res, ok := n.props.result(&p.prop); ok {
				return res, resultErr(res)
			}
			return raftfsm.Result{}, ErrUncertain
		case <-n.stop:
			return raftfsm.Result{}, ErrUncertain
		}
	}
}

// resultErr is the error an applied entry's result carries, as a node
// error.
func resultErr(res raftfsm.Result) error {
	if errors.Is(res.Err, raftfsm.ErrOtherTerm) || errors.Is(res.Err, raftfsm.ErrChunkBroken) {
		return ErrNotApplied
	}
	return res.Err
}

// Apply proposes e and waits for its result.
func (n *Node) Apply(e *raftfsm.Entry) (raftfsm.Result, error) {
	return n.propose(e, true).Wait()
}

// ApplyForwarded is the leader's half of forwarding: it proposes an entry
// a follower sent, encoded, and returns the function that waits for its
// result and the one that reports whether it is in (Pending.Answered).
// The entry must pass raftfsm.Validate (a command entry whose commands a
// client could have sent) or it is refused with ErrBadEntry before it
// reaches the log; its clock is restamped with this leader's.
// A node that does not lead, or leads in another term than the one the
// entry's proposal header names, refuses with ErrNotLeader rather than
// forward again. If leadership is lost while the entry is in flight the
// answer is ErrUncertain at once: the follower that proposed it learns the
// outcome from its own log.
func (n *Node) ApplyForwarded(data []byte) (wait func() (raftfsm.Result, error), answered func() bool) {
	p := n.applyForwarded(data)
	return p.Wait, p.Answered
}

func (n *Node) applyForwarded(data []byte) *Pending {
	if n.closed.Load() {
		return &Pending{err: ErrClosed}
	}
	out, term, proposal, err := forwardedEntry(data, n.Now())
	if err != nil {
		n.log.Warn("refused a forwarded entry", "error", err)
		return &Pending{err: fmt.Errorf("%w: %w", ErrBadEntry, err)}
	}
	n.stats.forwardedReceived.Add(1)
	p := &Pending{n: n, remote: true, fence: term}
	p.prop.id = proposal
	p.data = out
	if err := n.entrySizeErr(p.data); err != nil {
		return &Pending{err: err}
	}
	n.proposeLocal(p)
	return p
}

// forwardedEntry checks data, an entry a follower forwarded, as
// raftfsm.Validate does, and returns it restamped with the leader's clock
// now, with the term and proposal its header names.
//
// The entry is decoded only to be checked, into a scratch Entry kept for
// the next (its slices alias data until released); what is proposed is
// data itself with the time replaced (raftfsm.Restamp).
func forwardedEntry(data []byte, now int64) (out []byte, term, proposal uint64, err error) {
	e := forwardScratch.Get().(*raftfsm.Entry)
	defer releaseScratch(e)
	err = raftfsm.DecodeInto(e, data)
	if err == nil {
		err = raftfsm.Validate(e)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	out, ok := raftfsm.Restamp(data, now)
	if !ok {
		e.Time = now
		out = e.Encode(nil)
	}
	return out, e.Term, e.Proposal, nil
}

// forwardScratch holds the Entries forwardedEntry decodes into.
var forwardScratch = sync.Pool{New: func() any { return new(raftfsm.Entry) }}

// scratchArgs bounds the commands and arguments a scratch Entry kept for
// reuse has room for: one huge batch or command does not pin its arrays.
const scratchArgs = 4096

// releaseScratch drops what e holds of the data it decoded and keeps its
// command arrays for the next decode.
func releaseScratch(e *raftfsm.Entry) {
	cmds := e.Commands[:cap(e.Commands)]
	room := len(cmds)
	for i := range cmds {
		room += cap(cmds[i].Argv)
	}
	if room > scratchArgs {
		return
	}
	for i := range cmds {
		clear(cmds[i].Argv[:cap(cmds[i].Argv)])
	}
	*e = raftfsm.Entry{Commands: cmds[:0]}
	forwardScratch.Put(e)
}

func (n *Node) notLeaderErr() error {
	if addr, _ := n.raft.LeaderWithID(); addr == "" {
		return ErrNoLeader
	}
	return ErrNotLeader
}

// leaderPoll is how often a request waiting for a leader looks again.
const leaderPoll = 10 * time.Millisecond

// awaitLeader returns the ID of the leader once one is known, polling
// until deadline.
func (n *Node) awaitLeader(deadline time.Time) (string, error) {
	for {
		if _, id := n.raft.LeaderWithID(); id != "" {
			return string(id), nil
		}
		if err := n.pause(deadline, leaderPoll); err != nil {
			return "", err
		}
	}
}

func translateRaftErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipTransferInProgress):
		// Refused before being appended: try the next leader.
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrUncertain
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrTimeout
	}
	return err
}
