package node

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// The leader's confirmation round: what a read index (read.go) and a
// lease (lease.go) rest on.
//
// A round must show that a majority still followed this node at some
// moment after the round began. Raft's VerifyLeader does not show it:
// hashicorp/raft counts for a verification every successful answer to an
// AppendEntries request that arrives after the verification was
// registered, including answers to requests sent, and acted on by the
// follower, before it was. A leader stopped (SIGSTOP, a stalled VM) or
// starved of CPU finds such answers waiting when it runs again, and
// VerifyLeader confirmed it although the others had elected a new leader
// meanwhile, which had acknowledged writes: the old leader answered reads
// without them (reproduced with a 3-node cluster, its leader stopped for
// a second under a write load, 30 reads queued on it: one of them read
// the value from before an acknowledged write).
//
// So the round asks the other voters itself, over the peers' plane: each
// answers, as the request reaches it (after the round began), whether it
// follows this node in this term, and how long before that it last heard
// from it (Raft's last contact). A voter that follows this node in this
// term has voted for no one in a later term, so no later leader existed
// when it answered; and it keeps refusing votes until HeartbeatTimeout
// after that last contact, which is what a lease may count on: the round
// reports the largest such age among the majority that answered, and the
// lease ends that much earlier.
//
// A voter of an older build does not know the request: while one is
// needed for a majority, the round falls back to VerifyLeader and grants
// no lease.

// ErrNotFollowing is a node's answer to a confirmation round of a leader
// it does not follow in that term.
var ErrNotFollowing = errors.New("this node does not follow that leader in that term")

// ErrPeerTooOld is a peer's answer to a request its build does not know.
var ErrPeerTooOld = errors.New("the peer's build does not know this request")

// noLease is the age a round reports when it confirmed leadership for
// the moment only (the VerifyLeader fallback): no lease may be taken.
const noLease = math.MaxUint64

// FollowsHere answers a confirmation round of leader for term on this
// node: how long ago it last heard from leader, which it follows in term;
// ErrNotFollowing otherwise.
func (n *Node) FollowsHere(leader string, term uint64) (time.Duration, error) {
	if n.raft.State() != raft.Follower {
		return 0, ErrNotFollowing
	}
	if _, id := n.raft.LeaderWithID(); string(id) != leader || n.raft.CurrentTerm() != term {
		return 0, ErrNotFollowing
	}
	return time.Since(n.raft.LastContact()), nil
}

// confirmLeadership runs one confirmation round and returns the age of
// the majority's last contact (noLease when it could not be learned). It
// tries again, within readyWait, while too few voters say they follow
// this node (some are unreachable, or have not heard from a new leader
// yet) and it still leads in the same term; ErrNotLeader once it does
// not.
func (n *Node) confirmLeadership() (uint64, error) {
	deadline := time.Now().Add(readyWait)
	term := n.raft.CurrentTerm()
	for {
		if !n.IsLeader() || n.raft.CurrentTerm() != term {
			return 0, ErrNotLeader
		}
		// One round a try, whichever way it confirms.
		n.stats.readRounds.Add(1)
		others, quorum, err := otherVoters(n.raft, n.cfg.ID)
		if err != nil {
			return 0, translateRaftErr(err)
		}
		if len(others) == 0 {
			return n.verifyLeader() // the only voter: no one else to ask
		}
		if n.peers == nil {
			return n.verifyLeaderForNow()
		}
		age, err := n.askVoters(others, quorum-1, term, deadline)
		switch {
		case errors.Is(err, ErrPeerTooOld):
			return n.verifyLeaderForNow()
		case err == nil:
			// The answers came while the voters followed this node in
			// term; it must still lead in term now, so that it had not
			// voted for another before they answered.
			if n.raft.CurrentTerm() != term || !n.IsLeader() {
				return 0, ErrNotLeader
			}
			return uint64(age), nil
		}
		n.log.Debug("a confirmation round did not reach a majority", "error", err)
		if err := n.pause(deadline, retryPause); err != nil {
			return 0, ErrTimeout
		}
	}
}

// verifyLeaderForNow is Raft's confirmation, which shows leadership for
// the moment at best: it reports noLease.
func (n *Node) verifyLeaderForNow() (uint64, error) {
	if _, err := n.verifyLeader(); err != nil {
		return 0, err
	}
	return noLease, nil
}

// otherVoters returns the voters of r's configuration other than self,
// and how many votes make a majority.
func otherVoters(r *raft.Raft, self string) ([]string, int, error) {
	f := r.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, 0, err
	}
	var others []string
	voters := 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if string(s.ID) != self {
			others = append(others, string(s.ID))
		}
	}
	return others, voters/2 + 1, nil
}

// askVoters asks each of others whether it follows this node in term,
// and returns once need of them said so, with the largest age of last
// contact among those; an error once that can no longer happen:
// ErrPeerTooOld when too old a build stands in the way, else the last
// error met.
func (n *Node) askVoters(others []string, need int, term uint64, deadline time.Time) (time.Duration, error) {
	if try := time.Now().Add(confirmWait); try.Before(deadline) {
		deadline = try
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	type answer struct {
		age time.Duration
		err error
	}
	answers := make(chan answer, len(others))
	for _, id := range others {
		go func() {
			age, err := n.peers.Follows(ctx, id, n.cfg.ID, term)
			answers <- answer{age, err}
		}()
	}
	var ages []time.Duration
	var lastErr, tooOld error
	failed := 0
	for range others {
		a := <-answers
		switch {
		case a.err == nil:
			ages = append(ages, a.age)
			if len(ages) == need {
				return slices.Max(ages), nil
			}
			continue
		case errors.Is(a.err, ErrPeerTooOld):
			tooOld = a.err
		}
		lastErr = a.err
		if failed++; len(others)-failed < need {
			break
		}
	}
	if tooOld != nil {
		return 0, tooOld
	}
	return 0, lastErr
}

// confirmWait bounds one try of a confirmation round: a voter that does
// not answer within it is asked again (with the others) in the next.
const confirmWait = time.Second
