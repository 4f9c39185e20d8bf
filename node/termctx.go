package node

import "context"

// A follower's request to the leader for a read index is abandoned as
// soon as this node applies an entry of a later term: another leader has
// been elected, and waiting on the old one, which may be paused or cut
// off with its connection still open, would hold every read sharing the
// round until the round's deadline. The request is then made again, to
// whoever leads now. Rounds take their context from termContext, a
// child of a context the term watcher cancels, so following the term
// costs a round no goroutine.

// termCtx is the context of the current applied term.
type termCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newTermCtx() *termCtx {
	ctx, cancel := context.WithCancel(context.Background())
	return &termCtx{ctx: ctx, cancel: cancel}
}

// termContext returns a context cancelled once this node applies an
// entry of a later term than it has now, restores a snapshot, or stops.
func (n *Node) termContext() context.Context {
	return n.terms.Load().ctx
}

// watchTerms cancels the current term's context each time the applied
// term grows, after putting a new one in its place.
func (n *Node) watchTerms() {
	defer n.wg.Done()
	for {
		// The channel is taken before the new context is made, so a
		// change that comes in between still cancels that context.
		changed := n.fsm.TermChanged()
		n.terms.Swap(newTermCtx()).cancel()
		select {
		case <-n.stop:
			n.terms.Load().cancel()
			return
		case <-changed:
		}
	}
}
